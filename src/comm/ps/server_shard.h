#pragma once
// defines: marian::ServerShard — the part of the parameters one node serves (seed 004,
// Algorithms 7 and 9): it applies a client's (dense or dropped) gradients with the configured
// optimizer, one ParameterShard per device of the node, and answers with its parameters or,
// with delta dropping, with the largest entries of (parameters - what this client has),
// remembering exactly what it sent, so that no update is lost or applied twice.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/ps/message.h"
#include "optimizers/parameter_shard.h"

namespace marian {

class ServerShard {
public:
  using OptimizerFactory = std::function<std::unique_ptr<Optimizer>()>;

  // range: the node's part of the model of `total` parameters; initial: the whole model (every
  // client starts with it too); devices: how many sub-ranges (one per device of the node) run their
  // optimizer on parallel CPU threads: the shard lives in host memory whatever the devices;
  // deltaKeep < 1: dropped replies, their threshold sampled from the run's `seed` (--seed).
  ServerShard(int shard, Range range, size_t total, const std::vector<float>& initial, size_t devices,
              const OptimizerFactory& makeOptimizer, size_t clients, double deltaKeep, float emaAlpha, uint64_t seed);

  // Applies a push (pushDense or pushSparse, read where it was received: a dense push is the
  // optimizer's gradient as it lies) and returns the packed reply for that client: the
  // parameters, or the dropped deltas. Thread-safe: the server thread and the node's own clients
  // (local bypass) call it concurrently.
  std::vector<char> updateAndReply(const MessageView& push);
  // The shard's parameters (or their moving average).
  std::vector<float> values(bool smoothed);
  // What the server recorded as sent to a client, in the shard's coordinates.
  std::vector<float> clientView(int client);
  Range range() const { return range_; }
  // The extra of a checkpoint that holds what the servers sent to a client (global layout).
  static std::string viewName(int client) { return "server-view.client" + std::to_string(client); }
  // The counter of a checkpoint that holds a shard's replies so far (its version).
  static std::string versionName(int shard) { return "server-version.shard" + std::to_string(shard); }

  // The shard's parameters, moving average, optimizer state, and with delta dropping what each
  // client was sent ("server-view.clientC", global layout) and the replies' count.
  void saveTo(ModelState& state);
  // Takes its range of a saved state; the clients' views when the checkpoint was saved by the
  // same clients (the caller decides), otherwise every client holds the restored parameters.
  void restoreFrom(const ModelState& state, bool sameClients);

private:
  int shard_;
  Range range_;
  double deltaKeep_;
  std::mutex mutex_;
  FlatBuffer params_, grads_, delta_;
  std::vector<std::unique_ptr<ParameterShard>> devices_;  // sub-ranges of params_
  std::vector<std::unique_ptr<FlatBuffer>> views_;        // per client, with delta dropping
  std::vector<uint64_t> lastVersion_;                     // per client: version after its last exchange
  uint64_t seed_;
  uint64_t version_ = 0;
};

}  // namespace marian
