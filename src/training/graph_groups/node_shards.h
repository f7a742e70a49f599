#pragma once
// defines: marian::NodeShards — a rank's parameters over its devices, in shards: shard k
// (equalPart k of the flat parameters) is device k's to update, with its own optimizer and moving
// average (a ParameterShard); what both placements share (the shards, their state and values).
// The two ways of training a node's devices together are the two placements, each a class over
// this one: InPlaceShards (synchronous SGD, in_place_shards.h) and ApartShards (asynchronous SGD,
// apart_shards.h), each with its gradient norm, divergence check and --clip-norm.
#include <functional>
#include <memory>
#include <vector>

#include "common/equal_split.h"
#include "graph/parameters.h"
#include "optimizers/adam_moments.h"
#include "optimizers/parameter_shard.h"

namespace marian {

class NodeShards {
public:
  virtual ~NodeShards() = default;

  size_t size() const { return shards_.size(); }
  const std::vector<std::unique_ptr<ParameterShard>>& shards() const { return shards_; }
  std::vector<Range> ranges() const;

  // Adam's m and v where these shards keep them, read by name (1-bit Adam's view).
  AdamMoments adamMoments(float beta1) const { return AdamMoments::of(shards_, beta1); }

  // The parameters (or their moving average) joined over the shards, on the host.
  std::vector<float> values(bool smoothed) const;
  void saveTo(ModelState& state) const;
  // Every shard's optimizer statistics reset (Optimizer::resetStatistics).
  void resetOptimizers() {
    for(auto& s : shards_)
      s->resetOptimizer();
  }
  // Every device's parameters and every shard's state from `state` (of any layout).
  void restoreFrom(const ModelState& state);

protected:
  // params[d]: device d's parameters (initialised alike); makeOptimizer: one optimizer per shard;
  // shard k's values are device k's own (inPlace) or a copy on `deviceOf(k)`.
  NodeShards(std::vector<Parameters*> params, const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer,
             float emaAlpha, bool inPlace, const std::function<Device(size_t)>& deviceOf);
  bool onGpus() const { return params_[0]->device().type == DeviceType::gpu; }

  std::vector<Parameters*> params_;
  std::vector<std::unique_ptr<ParameterShard>> shards_;
};

}  // namespace marian
