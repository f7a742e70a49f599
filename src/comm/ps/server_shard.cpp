#include "comm/ps/server_shard.h"

#include <algorithm>

#include "common/parallel.h"
#include "tensors/kernels.h"

namespace marian {

ServerShard::ServerShard(int shard, Range range, size_t total, const std::vector<float>& initial, size_t devices,
                         const OptimizerFactory& makeOptimizer, size_t clients, double deltaKeep, float emaAlpha,
                         uint64_t seed)
    : shard_(shard), range_(range), deltaKeep_(deltaKeep),
      params_(cpuDevice(0), Type::float32, std::max<size_t>(range.size, 1)),
      grads_(cpuDevice(0), Type::float32, std::max<size_t>(range.size, 1)),
      delta_(cpuDevice(0), Type::float32, std::max<size_t>(range.size, 1)), lastVersion_(clients, 0),
      seed_(seed * 7919 + uint64_t(shard)) {
  ABORT_IF(initial.size() != total || range.end() > total, "Shard [{}, {}) of a model of {} given {} values",
           range.offset, range.end(), total, initial.size());
  std::vector<float> mine = rangeOf(initial, range);
  Tensor values = params_.all().slice(0, range.size);
  if(range.size)
    kernels::fromHost(values, mine);
  for(size_t d = 0; d < devices; ++d) {
    Range part = equalPart(range.size, d, devices);
    devices_.push_back(std::make_unique<ParameterShard>(Range{range.offset + part.offset, part.size}, cpuDevice(0),
                                                        values.slice(part.offset, part.size), /*inPlace=*/true,
                                                        makeOptimizer(), emaAlpha));
  }
  if(deltaKeep_ < 1.0)
    for(size_t c = 0; c < clients; ++c) {
      views_.push_back(std::make_unique<FlatBuffer>(cpuDevice(0), Type::float32, std::max<size_t>(range.size, 1)));
      kernels::copy(views_.back()->all(), params_.all());
    }
}

std::vector<char> ServerShard::updateAndReply(const MessageView& in) {
  const MessageHeader& h = in.header;
  ABORT_IF(h.shard != shard_, "Server of shard {} got a push for shard {}", shard_, h.shard);
  ABORT_IF(h.client < 0 || size_t(h.client) >= lastVersion_.size(), "Push from unknown client {}", h.client);
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = range_.size;

  // the gradients, dense, in the shard's coordinates: a dense push as it was received
  Tensor grads;
  if(h.kind == MessageKind::pushDense) {
    ABORT_IF(h.count != n, "Dense push of {} values to a shard of {}", h.count, n);
    grads = in.dense();
  } else {
    ABORT_IF(h.kind != MessageKind::pushSparse, "Server got message kind {} as a push", uint32_t(h.kind));
    grads = grads_.all();
    float* g = grads.f32();
    std::fill(g, g + n, 0.f);
    SparseView s = in.sparse();
    for(size_t k = 0; k < s.size; ++k) {
      ABORT_IF(s.indices[k] >= n, "Sparse push index {} outside a shard of {}", s.indices[k], n);
      g[s.indices[k]] = s.values[k];
    }
  }

  Message out;
  out.header = h;
  out.header.staleness = version_ - std::min(version_, h.version);
  parallelFor(devices_.size(), [&](size_t d) {  // the devices' sub-ranges on parallel CPU threads (host memory)
    Range part = devices_[d]->range();
    devices_[d]->update(grads.slice(part.offset - range_.offset, part.size), h.lr);
  });
  ++version_;
  lastVersion_[h.client] = version_;
  out.header.version = version_;

  Tensor params = params_.all().slice(0, n);
  if(deltaKeep_ >= 1.0 || h.fullReply) {  // a full reply: the client's view is the parameters again
    out.header.kind = MessageKind::replyDense;
    if(deltaKeep_ < 1.0)
      kernels::copy(views_[size_t(h.client)]->all().slice(0, n), params);
    return Message::packDense(out.header, params);
  }
  if(n) {
    // delta = params - what the client has; send the largest, record exactly what was sent
    out.header.kind = MessageKind::replySparse;
    Tensor view = views_[size_t(h.client)]->all().slice(0, n), delta = delta_.all().slice(0, n);
    kernels::copy(delta, params);
    kernels::add(delta, view, -1.f);
    float threshold = kernels::sampledThreshold(delta, deltaKeep_, seed_ * 1000003ull + version_);
    kernels::takeAbove(delta, threshold, out.sparse.indices, out.sparse.values);
    kernels::scatterAdd(view, out.sparse.indices, out.sparse.values);
  } else {
    out.header.kind = MessageKind::replySparse;
  }
  return out.pack();
}

std::vector<float> ServerShard::values(bool smoothed) {
  std::lock_guard<std::mutex> lock(mutex_);
  return joinShards(devices_, smoothed, [](const auto& d) -> const ParameterShard& { return *d; });
}

std::vector<float> ServerShard::clientView(int client) {
  if(deltaKeep_ >= 1.0)
    return values(false);  // dense replies: every client got the parameters themselves
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels::toHost(views_.at(size_t(client))->all().slice(0, range_.size));
}

void ServerShard::saveTo(ModelState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  for(auto& d : devices_)
    d->saveTo(state);
  for(size_t c = 0; c < views_.size(); ++c) {
    std::vector<float>& global = state.extras[viewName(int(c))];
    if(global.size() != state.n)
      global.assign(state.n, 0.f);
    std::vector<float> view = kernels::toHost(views_[c]->all().slice(0, range_.size));
    placeRange(global, range_, view);
  }
  state.counters[versionName(shard_)] = version_;
}

void ServerShard::restoreFrom(const ModelState& state, bool sameClients) {
  std::lock_guard<std::mutex> lock(mutex_);
  for(auto& d : devices_)
    d->restoreFrom(state);
  auto version = state.counters.find(versionName(shard_));
  version_ = version != state.counters.end() ? version->second : 0;
  std::fill(lastVersion_.begin(), lastVersion_.end(), version_);
  for(size_t c = 0; c < views_.size(); ++c) {
    Tensor view = views_[c]->all().slice(0, range_.size);
    if(!sameClients || !state.extras.count(viewName(int(c)))) {
      kernels::copy(view, params_.all().slice(0, range_.size));
      continue;
    }
    const std::vector<float>& global = state.extras.at(viewName(int(c)));
    kernels::fromHost(view, rangeOf(global, range_));
  }
}

}  // namespace marian
