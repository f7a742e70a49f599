#include "comm/server_shard.h"

#include "common/parallel.h"
#include "tensors/kernels.h"

namespace marian {

ServerShard::ServerShard(int shard, std::vector<float> initial, size_t devices,
                         const OptimizerFactory& makeOptimizer, size_t clients, double deltaKeep,
                         float emaAlpha)
    : shard_(shard), size_(initial.size()), deltaKeep_(deltaKeep), emaAlpha_(emaAlpha),
      params_(cpuDevice(0), Type::float32, std::max<size_t>(initial.size(), 1)),
      grads_(cpuDevice(0), Type::float32, std::max<size_t>(initial.size(), 1)),
      lastVersion_(clients, 0), rng_(uint64_t(shard) * 7919 + 17) {
  if(size_)
    kernels::fromHost(params_.all().slice(0, size_), initial);
  if(emaAlpha_ > 0.f) {
    ema_ = std::make_unique<FlatBuffer>(cpuDevice(0), Type::float32, std::max<size_t>(size_, 1));
    kernels::copy(ema_->all(), params_.all());
  }
  for(size_t d = 0; d < devices; ++d) {
    size_t begin = size_ * d / devices, end = size_ * (d + 1) / devices;
    deviceRanges_.push_back({begin, end - begin});
    optimizers_.push_back(makeOptimizer());
  }
  if(deltaKeep_ < 1.0)
    views_.assign(clients, initial);
}

Message ServerShard::push(const Message& in) {
  const MessageHeader& h = in.header;
  ABORT_IF(h.shard != shard_, "Server of shard {} got a push for shard {}", shard_, h.shard);
  ABORT_IF(h.client < 0 || size_t(h.client) >= lastVersion_.size(), "Push from unknown client {}", h.client);
  std::lock_guard<std::mutex> lock(mutex_);

  // the gradients, dense, in the shard's coordinates
  float* g = grads_.all().f32();
  if(h.kind == MessageKind::pushDense) {
    ABORT_IF(in.dense.size() != size_, "Dense push of {} values to a shard of {}", in.dense.size(), size_);
    std::copy(in.dense.begin(), in.dense.end(), g);
  } else {
    ABORT_IF(h.kind != MessageKind::pushSparse, "Server got message kind {} as a push", uint32_t(h.kind));
    std::fill(g, g + size_, 0.f);
    for(size_t k = 0; k < in.sparse.size(); ++k) {
      ABORT_IF(in.sparse.indices[k] >= size_, "Sparse push index {} outside a shard of {}", in.sparse.indices[k], size_);
      g[in.sparse.indices[k]] = in.sparse.values[k];
    }
  }

  Message out;
  out.header = h;
  out.header.staleness = version_ - std::min(version_, h.version);
  // each device's sub-range runs its own optimizer, in parallel
  parallelFor(deviceRanges_.size(), [&](size_t d) {
    auto [begin, n] = deviceRanges_[d];
    if(n == 0)
      return;
    optimizers_[d]->update(params_.all().slice(begin, n), grads_.all().slice(begin, n), h.lr);
    if(ema_)
      kernels::emaStep(ema_->all().slice(begin, n), params_.all().slice(begin, n), emaAlpha_);
  });
  ++version_;
  lastVersion_[h.client] = version_;
  out.header.version = version_;

  const float* p = params_.all().f32();
  if(deltaKeep_ >= 1.0) {
    out.header.kind = MessageKind::replyDense;
    out.dense.assign(p, p + size_);
  } else {
    // delta = params - what the client has; send the largest, record exactly what was sent
    out.header.kind = MessageKind::replySparse;
    std::vector<float>& view = views_[h.client];
    std::vector<float> delta(size_);
    for(size_t i = 0; i < size_; ++i)
      delta[i] = p[i] - view[i];
    out.sparse = selectAbove(delta.data(), size_, sampledThreshold(delta.data(), size_, deltaKeep_, rng_));
    for(size_t k = 0; k < out.sparse.size(); ++k)
      view[out.sparse.indices[k]] += out.sparse.values[k];
  }
  return out;
}

std::vector<float> ServerShard::values(bool smoothed) {
  std::lock_guard<std::mutex> lock(mutex_);
  const float* p = (smoothed && ema_ ? ema_->all() : params_.all()).f32();
  return std::vector<float>(p, p + size_);
}

std::vector<float> ServerShard::clientView(int client) {
  if(deltaKeep_ >= 1.0)
    return values(false);  // dense replies: every client got the parameters themselves
  std::lock_guard<std::mutex> lock(mutex_);
  return views_.at(size_t(client));
}

}  // namespace marian
