#pragma once
// defines: marian::ShardClient — one device's client of the sharded parameter server (seed 004,
// Algorithms 4, 5 and 8): sends its gradients to every node's shard, one shard at a time
// (dropped, with residuals, when gradient dropping is on), and updates its copy of the
// parameters from the replies (the parameters, or dropped deltas). Its own node's shard is
// updated directly, without MPI (local bypass).
#include <functional>
#include <mutex>
#include <vector>

#include "comm/dropper.h"
#include "comm/message.h"
#include "comm/mpi_transport.h"
#include "comm/server_shard.h"
#include "comm/shard_layout.h"

namespace marian {

struct ExchangeStats {
  uint64_t exchanges = 0;   // shard exchanges
  uint64_t staleness = 0;   // summed staleness reported by the shards
  uint64_t bytesSent = 0, bytesReceived = 0;  // this client's payloads on the wire (not local)
};

class ShardClient {
public:
  // keep: the fraction of gradients sent (1 = dense); warmup: exchanges over which the sent
  // fraction falls from 1 to keep (geometrically); timeout: seconds to wait for a reply.
  // device: where the gradients live (a GPU keeps the dropping residual on the GPU).
  ShardClient(int id, ShardLayout layout, MpiTransport* transport, ServerShard* localShard,
              double keep, size_t warmup, double timeoutSeconds, uint64_t seed,
              Device device = cpuDevice());

  // grads and params are the whole flat vectors. params is changed only by the replies, so with
  // dropping it equals what the servers recorded as sent to this client.
  void exchange(const float* grads, float* params, float lr);
  // The same with grads and params on the client's device: with dropping, only the selected
  // gradients and the sparse deltas cross between device and host.
  void exchange(Tensor grads, Tensor params, float lr);

  std::vector<float> residual() const { return dropper_.residual(); }
  // With dropping: the sum of every gradient entry sent so far (to check that sent + residual
  // equals what was computed).
  const std::vector<float>& sentTotal() const { return sentTotal_; }
  ExchangeStats takeStats();
  int id() const { return id_; }

private:
  using PushFn = std::function<void(size_t offset, size_t n, double keep, Message& push)>;
  using ApplyFn = std::function<void(size_t offset, const Message& reply)>;
  // One push and reply per shard; fillPush puts the gradients of a shard's range into the push,
  // applyReply applies the (checked) reply to the parameters.
  void exchangeWith(const PushFn& fillPush, const ApplyFn& applyReply, float lr);
  double currentKeep() const;

  int id_;
  ShardLayout layout_;
  MpiTransport* transport_;
  ServerShard* localShard_;
  double keep_;
  size_t warmup_;
  double timeout_;
  GradientDropper dropper_;
  std::vector<uint64_t> versions_;  // per shard: version after this client's last exchange
  std::vector<float> sentTotal_;
  uint64_t exchanges_ = 0;
  std::mutex statsMutex_;
  ExchangeStats stats_;
};

}  // namespace marian
