#pragma once
// defines: marian::ShardClient — one device's client of the sharded parameter server (seed 004,
// Algorithms 4, 5 and 8): sends its gradients to every node's shard, one shard at a time
// (dropped, with residuals, when gradient dropping is on), and updates its copy of the
// parameters from the replies (the parameters, or dropped deltas). Its own node's shard is
// updated directly, without MPI (local bypass). Gradients and parameters are tensors on the
// client's device: on a GPU only the selected gradients and the sparse deltas cross to the host.
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/compression.h"
#include "comm/transport.h"
#include "comm/ps/message.h"
#include "comm/ps/server_shard.h"
#include "comm/ps/shard_layout.h"
#include "comm/topk_selection.h"

namespace marian {

struct ExchangeStats {
  uint64_t exchanges = 0;   // shard exchanges
  uint64_t staleness = 0;   // summed staleness reported by the shards
  uint64_t sent = 0, received = 0;  // bytes of the pushes and replies on the wire (not the node's own shard's)
};

class ShardClient {
public:
  // compression: the fraction of gradients sent (keep, 1 = dense), its warm-up over exchanges,
  // momentum correction and local clipping (to C / sqrt(clients): every client's gradient reaches
  // the servers apart); timeout: seconds to wait for a reply; device: where the gradients live
  // (the dropping residual is kept there).
  ShardClient(int id, ShardLayout layout, Transport* transport, ServerShard* localShard,
              const Compression& compression, int clients, double timeoutSeconds, uint64_t seed, Device device);

  // grads and params are the whole flat vectors on the client's device. params is changed only
  // by the replies, so with delta dropping it equals what the servers recorded as sent to it
  // (plus what the client applied itself). With --local-gradients partial, `unsent` (the size
  // of grads; empty: not wanted) receives the part of grads that was not sent (the change of
  // the residual), for the client's own optimizer; every --local-average-freq exchanges the
  // replies are the parameters themselves, which ends the client's drift from the servers.
  void exchange(Tensor grads, Tensor params, float lr, Tensor unsent = Tensor());

  // The dropping residual (what was computed but not yet sent), in the global layout.
  std::vector<float> residual() const;
  ExchangeStats takeStats();
  int id() const { return id_; }
  // Whether a reply has said that the server's rank ended training (ServerLoop::announceEnd).
  bool heardEnd() const { return heardEnd_; }

  // "dropping-residual.clientC" (and "dropping-velocity.clientC" with momentum correction) and
  // the exchange count, for checkpoints.
  void saveTo(ModelState& state) const;
  // The same client's residual and count back (sameClients: the checkpoint's layout is this
  // run's). From another layout, client 0 takes the sum of every saved client's residual
  // (nothing owed is lost or sent twice) and the others start at zero.
  void restoreFrom(const ModelState& state, bool sameClients);
  // Whether a checkpoint holds any client's dropping residual.
  static bool savedResiduals(const ModelState& state);

private:
  int id_;
  ShardLayout layout_;
  Transport* transport_;
  ServerShard* localShard_;
  Compression compression_;
  int clients_;
  double timeout_;
  std::vector<std::unique_ptr<TopkSelector>> selectors_;  // one per node's range, when dropping
  std::vector<uint64_t> versions_;  // per shard: version after this client's last exchange
  std::atomic<bool> heardEnd_{false};
  uint64_t exchanges_ = 0;
  mutable std::mutex mutex_;  // one shard step at a time against a checkpoint reading the residual
  std::mutex statsMutex_;
  ExchangeStats stats_;
};

}  // namespace marian
