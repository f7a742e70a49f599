#pragma once
// defines: marian::NodeShards — a rank's parameters over its devices in synchronous SGD. Every
// device holds all parameters and gradients in its own arena; shard k (equalPart k of the
// devices) is device k's to update, in place. The in-node collectives are here: reduce-scatter
// (the computing devices' gradients of shard k added into device k's) and all-gather (every
// device copies every other device's updated shard); between them the step: one gradient norm
// over the shards (divergence check, --clip-norm), then each device's optimizer on its shard.
#include <memory>
#include <vector>

#include "common/equal_split.h"
#include "graph/parameters.h"
#include "optimizers/parameter_shard.h"
#include "training/gradient_buckets.h"

namespace marian {

class NodeShards {
public:
  // params[d]: device d's parameters (initialised alike); makeOptimizer: one optimizer per shard.
  NodeShards(std::vector<Parameters*> params, const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer,
             float emaAlpha);

  size_t size() const { return shards_.size(); }
  const std::vector<std::unique_ptr<ParameterShard>>& shards() const { return shards_; }
  std::vector<Range> ranges() const;
  // Shard k of device d's parameters (grads = false) or gradients.
  Tensor shard(size_t d, size_t k, bool grads) const;
  // The part of device d's gradient shard k inside `range` (empty when they do not meet).
  Tensor gradPart(size_t d, size_t k, Range range) const;

  // Reduce-scatter of `range` (or a bucket's ranges) into shard k: the gradients of every other
  // active device added into device k's.
  void sumDevicesInto(size_t k, Range range, const std::vector<char>& active);
  void sumDevicesInto(size_t k, const GradientBucket& bucket, const std::vector<char>& active);
  // `values` (all n of them, on the host) added into the gradient shards.
  void addToGradients(const std::vector<float>& values);
  // The optimizer step on every shard (each on its device's thread) after one norm over all:
  // `update` counts from 0 (it names a divergence).
  void step(float lr, float clipNorm, uint64_t update);
  // Every device copies every other device's shard.
  void allGather();

  // The moving average joined over the shards (the values: any device's parameters).
  std::vector<float> smoothed() const;
  void saveTo(ModelState& state) const;
  // Every device's parameters and every shard's state from `state` (of any layout).
  void restoreFrom(const ModelState& state);

private:
  std::vector<Parameters*> params_;
  std::vector<std::unique_ptr<ParameterShard>> shards_;  // shard k on device k, in its own arena
};

}  // namespace marian
