#pragma once
// defines: marian::PsDeviceClient — one device's side of the parameter server, as a step runs
// it after backward: the device's own optimizer step between synchronisations
// (--multi-node-local-optimizer, --local-gradients sum), then the exchange of its gradients with
// every shard (ShardClient): at once; at once with the unsent part applied by its own optimizer
// (--local-gradients partial, Aji et al. 2019); or handed to its communication thread through the
// double buffers (--multi-node-overlap).
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/ps/shard_client.h"
#include "optimizers/optimizer.h"
#include "training/ps/double_buffers.h"

namespace marian {

struct PsClientSettings {
  Compression compression;  // dropping, and local gradients where they can act
  bool overlap = false;     // --multi-node-overlap
  size_t maxDelay = 0;      // --multi-node-max-delay
  bool applySummed = false; // --multi-node-apply-summed
  bool localOptimizer = false;  // --multi-node-local-optimizer
  double timeout = 0;
  int clients = 1;  // every node's devices: the gradients the servers take apart
};

class PsDeviceClient {
public:
  // id: rank * devices + device; initial: the parameters every client starts with;
  // makeOptimizer: the device's own optimizer, where one is used; rankMutex: when not null, held
  // during each exchange (--multi-node-single-client); onError: what the communication thread
  // does with an exchange's exception.
  PsDeviceClient(int id, Device device, ShardLayout layout, Transport& transport, ServerShard& localShard,
                 const PsClientSettings& settings, uint64_t seed, const std::vector<float>& initial,
                 const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, std::mutex* rankMutex,
                 std::function<void(std::exception_ptr)> onError);

  // The device's (checked and clipped) gradients and its parameters, after backward.
  void step(Tensor grads, Tensor values, float lr);
  // The end of training: what the double buffers still hold summed is exchanged.
  void flush();
  void stop();

  ShardClient& shardClient() { return *shardClient_; }
  // From a checkpoint: the client's residuals and, in `values` (the device's parameters), what
  // its servers recorded as sent to it (the same clients) or the saved parameters.
  void restoreFrom(const ModelState& state, bool sameClients, Tensor values);

private:
  void exchangeNow(Tensor grads, Tensor params, float lr, Tensor unsent = Tensor());

  PsClientSettings settings_;
  std::mutex* rankMutex_;
  std::unique_ptr<ShardClient> shardClient_;
  std::unique_ptr<Optimizer> optimizer_;  // its own steps (local optimizer, local gradients)
  std::unique_ptr<FlatBuffer> unsent_;    // --local-gradients partial: what the exchange did not send
  std::unique_ptr<DoubleBuffers> buffers_;  // --multi-node-overlap
  float lastLr_ = 0;
};

}  // namespace marian
