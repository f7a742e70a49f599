#pragma once
// defines: marian::ServerShard — the part of the parameters one node serves (seed 004,
// Algorithms 7 and 9): it applies a client's (dense or dropped) gradients with the configured
// optimizer, split over the node's devices, and answers with its parameters or, with delta
// dropping, with the largest entries of (parameters - what this client has), remembering
// exactly what it sent, so that no update is lost or applied twice.
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/dropper.h"
#include "comm/message.h"
#include "optimizers/optimizer.h"

namespace marian {

class ServerShard {
public:
  using OptimizerFactory = std::function<std::unique_ptr<Optimizer>()>;

  // initial: the shard's starting values (every client starts with them too); devices: how many
  // sub-ranges run their optimizer in parallel; deltaKeep < 1: dropped replies.
  ServerShard(int shard, std::vector<float> initial, size_t devices, const OptimizerFactory& makeOptimizer,
              size_t clients, double deltaKeep, float emaAlpha);

  // Applies a push (pushDense or pushSparse) and returns the reply for that client. Thread-safe:
  // the server thread and the node's own clients (local bypass) call it concurrently.
  Message push(const Message& push);
  // The shard's parameters (or their moving average).
  std::vector<float> values(bool smoothed);
  // What the server recorded as sent to a client (delta dropping), for conservation checks.
  std::vector<float> clientView(int client);
  size_t size() const { return size_; }

private:
  int shard_;
  size_t size_;
  double deltaKeep_;
  float emaAlpha_;
  std::mutex mutex_;
  FlatBuffer params_, grads_;
  std::unique_ptr<FlatBuffer> ema_;
  std::vector<std::pair<size_t, size_t>> deviceRanges_;
  std::vector<std::unique_ptr<Optimizer>> optimizers_;
  std::vector<std::vector<float>> views_;       // per client, with delta dropping
  std::vector<uint64_t> lastVersion_;           // per client: version after its last exchange
  std::mt19937_64 rng_;
  uint64_t version_ = 0;
};

}  // namespace marian
