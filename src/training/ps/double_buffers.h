#pragma once
// defines: marian::DoubleBuffers — one parameter-server client's double buffers and its
// communication thread (seed 004, Algorithms 5/6; --multi-node-overlap). The compute thread sums
// its gradients; when the communication thread is free, it takes the parameters that thread's
// last exchange produced and hands it the sum, so computing never waits for the network (but
// for --multi-node-max-delay). The buffers live on the client's device; on a GPU the two threads
// work on separate streams, so each hand-over waits for the work on the buffers it passes.
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tensors/arena.h"

namespace marian {

class DoubleBuffers {
public:
  // exchange(grads, params, lr): one exchange with every shard (on the communication thread);
  // onError: what the thread does with an exchange's exception (it then goes on serving).
  using Exchange = std::function<void(Tensor grads, Tensor params, float lr)>;
  DoubleBuffers(Device device, const std::vector<float>& initial, Exchange exchange, size_t maxDelay,
                bool applySummed, std::function<void(std::exception_ptr)> onError, const std::string& threadName);
  ~DoubleBuffers();  // stops the thread

  // After the compute thread's gradients `grads`: summed; when the communication thread is idle,
  // `values` become the parameters of its last exchange (minus lr x the sum with applySummed)
  // and the sum goes to it.
  void step(Tensor grads, Tensor values, float lr);
  // Waits for the thread, then exchanges what is still summed (the end of training).
  void flush(float lr);
  // A resume: the thread's parameters become `params`, nothing summed.
  void reset(const std::vector<float>& params);
  void stop();

private:
  void run();
  void waitIdle();

  Device device_;
  Exchange exchange_;
  size_t maxDelay_;
  bool applySummed_;
  std::function<void(std::exception_ptr)> onError_;
  std::string threadName_;
  // gradients summed since the last swap, those handed to the thread, and its copy of the
  // parameters, updated by the replies
  std::unique_ptr<FlatBuffer> sum_, grads_, params_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool busy_ = false, stopping_ = false;
  float lr_ = 0;
  size_t sinceSync_ = 0;
  std::thread thread_;
};

}  // namespace marian
