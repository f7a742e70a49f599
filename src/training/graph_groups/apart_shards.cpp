#include "training/graph_groups/apart_shards.h"

#include "optimizers/gradient_clipping.h"
#include "tensors/kernels.h"

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

struct ApartShards::HandOver {
  std::mutex mutex;
  std::unique_ptr<FlatBuffer> staging;               // another GPU's gradients, copied here before the update
  std::unique_ptr<DeviceEvent> updated;              // GPU: after the last update (on the shard's GPU)
  std::vector<std::unique_ptr<DeviceEvent>> pulled;  // GPU: after device d's last pull (on GPU d)
};

// apart: a copy of the (alike) initial values, on GPU k; CPU devices share the host memory
ApartShards::ApartShards(std::vector<Parameters*> params,
                         const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, float emaAlpha)
    : NodeShards(std::move(params), makeOptimizer, emaAlpha, /*inPlace=*/false,
                 [this](size_t k) { return onGpus() ? params_[k]->device() : cpuDevice(0); }) {
  for(auto& s : shards_) {
    auto h = std::make_unique<HandOver>();
    h->updated = backendFor(s->device()).createEvent();
    for(Parameters* p : params_)
      h->pulled.push_back(backendFor(p->device()).createEvent());
    handOvers_.push_back(std::move(h));
  }
  for(Parameters* p : params_) {
    gradsReady_.push_back(backendFor(p->device()).createEvent());
    backendFor(p->device()).synchronize();  // the shards' first values are in place
  }
}

ApartShards::~ApartShards() {
  try {  // no update may outlive the buffers it reads, also after an error
    synchronize();
  } catch(...) {
  }
}

void ApartShards::pull(size_t d) {
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

void ApartShards::push(size_t d, float lr, float clipNorm, uint64_t update) {
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

void ApartShards::synchronize() {
  if(!onGpus())
    return;
  for(auto& s : shards_)
    onShardLane([&] { backendFor(s->device()).synchronize(); });
}

}  // namespace marian
