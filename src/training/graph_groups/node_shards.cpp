#include "training/graph_groups/node_shards.h"

#include "tensors/kernels.h"

namespace marian {

NodeShards::NodeShards(std::vector<Parameters*> params,
                       const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, float emaAlpha, bool inPlace,
                       const std::function<Device(size_t)>& deviceOf)
    : params_(std::move(params)) {
  size_t n = params_[0]->totalSize(), devices = params_.size();
  for(size_t k = 0; k < devices; ++k) {
    Range range = equalPart(n, k, devices);
    // apart: a copy of the (alike) initial values
    Tensor storage = params_[inPlace ? k : 0]->values().slice(range.offset, range.size);
    shards_.push_back(
        std::make_unique<ParameterShard>(range, deviceOf(k), storage, inPlace, makeOptimizer(), emaAlpha));
  }
}

std::vector<Range> NodeShards::ranges() const {
  std::vector<Range> r;
  for(auto& s : shards_)
    r.push_back(s->range());
  return r;
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
