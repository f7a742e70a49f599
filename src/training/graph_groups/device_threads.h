#pragma once
// defines: marian::DeviceThreads — the scaffolding of the graph groups whose devices work through
// batches on their own (async SGD, the parameter server's clients): one thread per device serving
// a BatchQueue that the trainer fills (at most one batch waiting per device), started once the
// devices are ready and stopped before what their steps use goes.
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/float_mode.h"
#include "common/logging.h"
#include "common/timeline.h"
#include "training/graph_groups/batch_queue.h"

namespace marian {

class DeviceThreads {
public:
  // One batch on device d; returns its statistics. Errors end the job at the next push or wait.
  using Step = std::function<StepStats(size_t d, const BatchWork& work)>;

  explicit DeviceThreads(size_t devices) : devices_(devices), queue_(devices) {}
  ~DeviceThreads() { stop(); }

  // Starts the threads; name(d): the thread's name in the --timeline (empty: none).
  void start(Step step, std::function<std::string(size_t)> name = {}) {
    for(size_t d = 0; d < devices_; ++d)
      threads_.emplace_back([this, d, step, name, prefix = logging::threadPrefix()] {
        flushDenormalsToZero();
        logging::setThreadPrefix(prefix);
        if(name)
          timeline::nameThisThread(name(d));
        queue_.serve([&](const BatchWork& work) { return step(d, work); });
      });
  }
  // Hands a batch to the next free device; returns what the devices finished since the last call
  // (with one device the batch itself: waiting for it costs nothing and makes each display line
  // cover exactly its own batches, as in the singleton).
  StepStats update(const Batch& batch, uint64_t update, float lr) {
    queue_.push({batch, update, lr});
    if(devices_ == 1)
      queue_.waitIdle();
    return queue_.takeFinished();
  }
  // Until every batch handed over is done; rethrows a device's error.
  void waitIdle() { queue_.waitIdle(); }
  // An error raised outside the steps (a communication thread), for the next push or wait.
  void fail(std::exception_ptr e) { queue_.fail(e); }
  // Lets the threads finish their batches and joins them.
  void stop() {
    queue_.stop();
    for(std::thread& t : threads_)
      t.join();
    threads_.clear();
  }

private:
  size_t devices_;
  BatchQueue queue_;
  std::vector<std::thread> threads_;
};

}  // namespace marian
