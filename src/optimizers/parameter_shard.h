#pragma once
// defines: marian::ParameterShard — one (offset, size) range of the flat parameters on one device
// with everything that updates it: the optimizer and its state, and the moving average. Sync-SGD
// (shard k on device k), async SGD (one shard per device) and the parameter server (a node's
// shard, split over its devices) all keep their shards as these, and save and restore them by
// global index into one ModelState.
#include <memory>

#include "optimizers/model_state.h"
#include "optimizers/optimizer.h"

namespace marian {

class ParameterShard {
public:
  // The shard's values are `storage` itself (a slice of a device's parameter arena: sync-SGD
  // updates each device's own copy in place) when inPlace, otherwise a buffer of the shard's own
  // on `device`, starting as a copy of `storage`. emaAlpha > 0 keeps a moving average.
  ParameterShard(Range range, Device device, Tensor storage, bool inPlace, std::unique_ptr<Optimizer> optimizer,
                 float emaAlpha);

  // One optimizer step with `grads` (the shard's range), then the moving average: as Marian's, it
  // weighs the new values by max(alpha, 9 / (updates before + 10)), so that early on the average
  // follows training instead of keeping the initial values.
  void update(Tensor grads, float lr);

  Range range() const { return range_; }
  Device device() const { return device_; }
  Tensor values() const { return values_; }
  // the moving average, or the values without one
  Tensor smoothed() const { return ema_ ? ema_->all() : values_; }
  // The values (or the moving average) copied to the host, the shard's range exactly.
  std::vector<float> toHost(bool smoothed) const;

  // Everything a replica of the shard holds where it lives: values, moving average and, with
  // moments, the optimizer arrays (replicas on several ranks are averaged through these).
  std::vector<Tensor> replicaTensors(bool moments = true);
  // The optimizer's state array `name` over the part of the global `range` in this shard, into
  // out[i] for global index range.offset + i (zeros before the first step).
  void readOptimizerArray(const std::string& name, Range range, float* out) const;

  // The optimizer's statistics reset (Optimizer::resetStatistics).
  void resetOptimizer() { optimizer_->resetStatistics(); }

  // Writes the shard's range of values, moving average, optimizer arrays and step count.
  void saveTo(ModelState& state) const;
  // Takes the shard's range of a saved state (of any shard layout).
  void restoreFrom(const ModelState& state);

private:
  Range range_;
  Device device_;
  std::unique_ptr<FlatBuffer> own_;
  Tensor values_;
  std::unique_ptr<FlatBuffer> ema_;
  std::unique_ptr<Optimizer> optimizer_;
  float emaAlpha_;
};

// The values (or moving averages) of shards of consecutive ranges joined on the host, in order;
// shardOf(element) is the ParameterShard of an element of `shards`.
template <class Shards, class ShardOf>
std::vector<float> joinShards(const Shards& shards, bool smoothed, ShardOf shardOf) {
  std::vector<float> all;
  for(const auto& element : shards) {
    std::vector<float> part = shardOf(element).toHost(smoothed);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

}  // namespace marian
