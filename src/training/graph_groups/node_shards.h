#pragma once
// defines: marian::NodeShards — a rank's parameters over its devices, in shards: shard k
// (equalPart k of the flat parameters) is device k's to update, with its own optimizer and moving
// average (a ParameterShard). The gradient norm, divergence check and --clip-norm of a step are
// here too. The two ways of training a node's devices together are two placements:
//  - inPlace (synchronous SGD): every device holds all parameters and gradients in its own arena
//    and shard k is device k's own parameters. The in-node collectives: reduce-scatter (the
//    computing devices' gradients of shard k added into device k's), the step (one gradient norm
//    over the shards, then each device's optimizer on its shard), all-gather (every device
//    copies every other device's updated shard).
//  - apart (asynchronous SGD): shard k lives in a buffer of its own (on GPU k; in host memory for
//    CPU devices) under its own lock. A device pulls every shard into its parameters before it
//    computes and pushes its clipped gradients to every shard, which applies them at once. On
//    GPUs shard k's updates run on GPU k's second stream (lane 1) and events order the
//    hand-overs (a pull waits for the shard's last update, an update for the gradients it reads
//    and for the pulls of the values it overwrites), so the host never waits for another GPU;
//    on CPUs events are no-ops and the same code copies and updates in order.
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/equal_split.h"
#include "graph/parameters.h"
#include "optimizers/adam_moments.h"
#include "optimizers/parameter_shard.h"
#include "tensors/backend.h"
#include "training/graph_groups/gradient_buckets.h"

namespace marian {

class NodeShards {
public:
  enum class Placement { inPlace, apart };

  // params[d]: device d's parameters (initialised alike); makeOptimizer: one optimizer per shard.
  NodeShards(std::vector<Parameters*> params, const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer,
             float emaAlpha, Placement placement);
  ~NodeShards();  // apart on GPUs: waits for the updates still running

  size_t size() const { return shards_.size(); }
  const std::vector<std::unique_ptr<ParameterShard>>& shards() const { return shards_; }
  std::vector<Range> ranges() const;

  // --- inPlace (synchronous) ---
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

  // --- apart (asynchronous); thread-safe, device d's calls from one thread ---
  // Device d's parameters become every shard's current values.
  void pull(size_t d);
  // Device d's gradients, checked and clipped alone, applied by every shard.
  void push(size_t d, float lr, float clipNorm, uint64_t update);
  // Waits for the shards' updates still running on GPUs (their second streams).
  void synchronize();

  // Adam's m and v where these shards keep them, read by name (1-bit Adam's view).
  AdamMoments adamMoments(float beta1) const { return AdamMoments::of(shards_, beta1); }

  // The parameters (or their moving average) joined over the shards, on the host.
  std::vector<float> values(bool smoothed) const;
  void saveTo(ModelState& state) const;
  // Every device's parameters and every shard's state from `state` (of any layout).
  void restoreFrom(const ModelState& state);

private:
  struct HandOver;  // apart: a shard's lock and, on GPUs, its events

  bool onGpus() const { return params_[0]->device().type == DeviceType::gpu; }

  std::vector<Parameters*> params_;
  std::vector<std::unique_ptr<ParameterShard>> shards_;
  std::vector<std::unique_ptr<HandOver>> handOvers_;       // apart: one per shard
  std::vector<std::unique_ptr<DeviceEvent>> gradsReady_;   // apart, GPUs: after device d's clipped gradients
};

}  // namespace marian
