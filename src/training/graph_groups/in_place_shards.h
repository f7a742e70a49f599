#pragma once
// defines: marian::InPlaceShards — NodeShards placed for synchronous SGD: every device holds all
// parameters and gradients in its own arena and shard k is device k's own parameters. The in-node
// collectives: reduce-scatter (the computing devices' gradients of shard k added into device k's),
// the step (one gradient norm over the shards, then each device's optimizer on its shard),
// all-gather (every device copies every other device's updated shard).
#include "training/exchange/gradient_buckets.h"
#include "training/graph_groups/node_shards.h"

namespace marian {

class InPlaceShards : public NodeShards {
public:
  InPlaceShards(std::vector<Parameters*> params, const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer,
                float emaAlpha);

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
  // `update` counts from 0 (it names a divergence). The gradient is multiplied by `unscale` first
  // (cost scaling's 1/factor); with skipNotFinite a gradient that is not finite is left as it is
  // and false returned (otherwise that is a divergence, an error).
  bool step(float lr, float clipNorm, uint64_t update, float unscale = 1.f, bool skipNotFinite = false);
  // The L2 norm of the last step's gradient (unscaled, before clipping).
  double lastGradientNorm() const { return lastNorm_; }
  // Every device copies every other device's shard.
  void allGather();

private:
  double lastNorm_ = 0;
};

}  // namespace marian
