#pragma once
// defines: marian::ApartShards — NodeShards placed for asynchronous SGD: shard k lives in a buffer
// of its own (on GPU k; in host memory for CPU devices) under its own lock. A device pulls every
// shard into its parameters before it computes and pushes its clipped gradients to every shard,
// which applies them at once. On GPUs shard k's updates run on GPU k's second stream (lane 1) and
// events order the hand-overs (a pull waits for the shard's last update, an update for the
// gradients it reads and for the pulls of the values it overwrites), so the host never waits for
// another GPU; on CPUs events are no-ops and the same code copies and updates in order.
#include <mutex>

#include "tensors/backend.h"
#include "training/graph_groups/node_shards.h"

namespace marian {

class ApartShards : public NodeShards {
public:
  ApartShards(std::vector<Parameters*> params, const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer,
              float emaAlpha);
  ~ApartShards() override;  // on GPUs: waits for the updates still running

  // Thread-safe; device d's calls from one thread.
  // Device d's parameters become every shard's current values.
  void pull(size_t d);
  // Device d's gradients, checked and clipped alone, applied by every shard.
  void push(size_t d, float lr, float clipNorm, uint64_t update);
  // Waits for the shards' updates still running on GPUs (their second streams).
  void synchronize();

private:
  struct HandOver;  // a shard's lock and, on GPUs, its events
  std::vector<std::unique_ptr<HandOver>> handOvers_;      // one per shard
  std::vector<std::unique_ptr<DeviceEvent>> gradsReady_;  // GPUs: after device d's clipped gradients
};

}  // namespace marian
