#include "training/graph_groups/node_shards.h"

#include <algorithm>

#include "common/parallel.h"
#include "common/timeline.h"
#include "optimizers/gradient_clipping.h"
#include "tensors/kernels.h"
#include "tensors/backend.h"

namespace marian {

namespace {
// Runs f with this thread's GPU work on lane 1 (the shard updates' stream).
template <class F>
void onShardLane(F&& f) {
  setDeviceLane(1);
  try {
    f();
  } catch(...) {
    setDeviceLane(0);
    throw;
  }
  setDeviceLane(0);
}
}  // namespace

struct NodeShards::HandOver {
  std::mutex mutex;
  std::unique_ptr<FlatBuffer> staging;               // another GPU's gradients, copied here before the update
  std::unique_ptr<DeviceEvent> updated;              // GPU: after the last update (on the shard's GPU)
  std::vector<std::unique_ptr<DeviceEvent>> pulled;  // GPU: after device d's last pull (on GPU d)
};

NodeShards::NodeShards(std::vector<Parameters*> params,
                       const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, float emaAlpha,
                       Placement placement)
    : params_(std::move(params)) {
  size_t n = params_[0]->totalSize(), devices = params_.size();
  bool apart = placement == Placement::apart;
  for(size_t k = 0; k < devices; ++k) {
    Range range = equalPart(n, k, devices);
    // apart: a copy of the (alike) initial values, on GPU k; CPU devices share the host memory
    Device device = apart && !onGpus() ? cpuDevice(0) : params_[k]->device();
    Tensor storage = params_[apart ? 0 : k]->values().slice(range.offset, range.size);
    shards_.push_back(
        std::make_unique<ParameterShard>(range, device, storage, /*inPlace=*/!apart, makeOptimizer(), emaAlpha));
    if(!apart)
      continue;
    auto h = std::make_unique<HandOver>();
    h->updated = backendFor(device).createEvent();
    for(Parameters* p : params_)
      h->pulled.push_back(backendFor(p->device()).createEvent());
    handOvers_.push_back(std::move(h));
  }
  if(apart)
    for(Parameters* p : params_) {
      gradsReady_.push_back(backendFor(p->device()).createEvent());
      backendFor(p->device()).synchronize();  // the shards' first values are in place
    }
}

NodeShards::~NodeShards() {
  try {  // no update may outlive the buffers it reads, also after an error
    synchronize();
  } catch(...) {
  }
}

std::vector<Range> NodeShards::ranges() const {
  std::vector<Range> r;
  for(auto& s : shards_)
    r.push_back(s->range());
  return r;
}

Tensor NodeShards::shard(size_t d, size_t k, bool grads) const {
  Tensor all = grads ? params_[d]->grads() : params_[d]->values();
  return all.slice(shards_[k]->range().offset, shards_[k]->range().size);
}

Tensor NodeShards::gradPart(size_t d, size_t k, Range range) const {
  Range r = shards_[k]->range();
  size_t begin = std::max(r.offset, range.offset), end = std::max(begin, std::min(r.end(), range.end()));
  return params_[d]->grads().slice(begin, end - begin);
}

void NodeShards::sumDevicesInto(size_t k, Range range, const std::vector<char>& active) {
  Tensor mine = gradPart(k, k, range);
  if(mine.size() == 0)
    return;
  for(size_t d = 0; d < params_.size(); ++d)
    if(d != k && active[d])
      kernels::add(mine, gradPart(d, k, range));
}

void NodeShards::sumDevicesInto(size_t k, const GradientBucket& bucket, const std::vector<char>& active) {
  for(const Range& range : bucket)
    sumDevicesInto(k, range, active);
}

void NodeShards::addToGradients(const std::vector<float>& values) {
  for(size_t k = 0; k < shards_.size(); ++k) {
    Range r = shards_[k]->range();
    FlatBuffer host(cpuDevice(), Type::float32, std::max<size_t>(r.size, 1));
    kernels::fromHost(host.all().slice(0, r.size), rangeOf(values, r));
    kernels::add(shard(k, k, true), host.all().slice(0, r.size));
  }
}

void NodeShards::step(float lr, float clipNorm, uint64_t update) {
  size_t n = shards_.size();
  std::vector<double> squares(n);
  parallelFor(n, [&](size_t k) { squares[k] = kernels::squaredNorm(shard(k, k, true)); });
  double squaredNorm = 0;
  for(double s : squares)
    squaredNorm += s;
  float clip = clipFactor(squaredNorm, clipNorm, update);
  parallelFor(n, [&](size_t k) {  // optimizer and moving average on the owned shard
    timeline::Span span("update", "update");
    Tensor grads = shard(k, k, true);
    if(clip != 1.f)
      kernels::scale(grads, clip);
    shards_[k]->update(grads, lr);
  });
}

void NodeShards::allGather() {
  size_t n = shards_.size();
  if(n > 1)
    parallelFor(n, [&](size_t d) {
      timeline::Span span("all-gather", "sync");
      for(size_t k = 0; k < n; ++k)
        if(k != d)
          kernels::copy(shard(d, k, false), shard(k, k, false));
    });
}

void NodeShards::pull(size_t d) {
  Tensor values = params_[d]->values();
  Backend& mine = backendFor(params_[d]->device());
  for(size_t k = 0; k < shards_.size(); ++k) {
    HandOver& h = *handOvers_[k];
    std::lock_guard<std::mutex> lock(h.mutex);
    Range r = shards_[k]->range();
    mine.wait(h.updated.get());
    kernels::copyUnordered(values.slice(r.offset, r.size), shards_[k]->values());
    mine.record(h.pulled[d].get());
  }
}

void NodeShards::push(size_t d, float lr, float clipNorm, uint64_t update) {
  Tensor grads = params_[d]->grads();
  clipGradients(grads, clipNorm, update);
  Backend& mine = backendFor(params_[d]->device());
  mine.record(gradsReady_[d].get());
  for(size_t k = 0; k < shards_.size(); ++k) {  // each shard applies the gradients at once
    HandOver& h = *handOvers_[k];
    ParameterShard& shard = *shards_[k];
    std::lock_guard<std::mutex> lock(h.mutex);
    onShardLane([&] {
      Backend& owner = backendFor(shard.device());
      owner.wait(gradsReady_[d].get());
      for(auto& p : h.pulled)  // no pull still reads the values this update overwrites
        owner.wait(p.get());
      Tensor g = grads.slice(shard.range().offset, shard.range().size);
      if(g.device.type == DeviceType::gpu && g.device != shard.device()) {  // another GPU's memory
        if(!h.staging)
          h.staging = std::make_unique<FlatBuffer>(shard.device(), Type::float32, shard.range().size);
        kernels::copyUnordered(h.staging->all(), g);
        g = h.staging->all();
      }
      shard.update(g, lr);
      owner.record(h.updated.get());
    });
    mine.wait(h.updated.get());  // the next backward overwrites the gradients the update reads
  }
}

void NodeShards::synchronize() {
  if(handOvers_.empty() || !onGpus())
    return;
  for(auto& s : shards_)
    onShardLane([&] { backendFor(s->device()).synchronize(); });
}

std::vector<float> NodeShards::values(bool smoothed) const {
  return joinShards(shards_, smoothed, [](const auto& s) -> const ParameterShard& { return *s; });
}

void NodeShards::saveTo(ModelState& state) const {
  for(auto& s : shards_)
    s->saveTo(state);
}

void NodeShards::restoreFrom(const ModelState& state) {
  for(Parameters* p : params_)  // every device holds all parameters; its shard restores its range
    kernels::fromHost(p->values(), state.values);
  for(auto& s : shards_)
    s->restoreFrom(state);
}

}  // namespace marian
