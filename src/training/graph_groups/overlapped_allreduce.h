#pragma once
// defines: marian::OverlappedAllreduce — the allreduce of sync-SGD across ranks started while
// backward goes on (--bucket-size, as PyTorch DDP's buckets): the gradient is cut into buckets of
// whole parameters; the devices' backward passes report each parameter whose gradient is final;
// as soon as every device of the node has finished a bucket, a communication thread reduces it
// (across the node's devices, then across ranks) while backward computes the rest. Buckets run in
// one order on every rank (collectives must match): the order in which backward finished them at
// the first update, rank 0's, broadcast; that first update reduces them after backward. What only
// the end of backward completes (embedding lookups put apart) goes last: afterBackward, once
// every device's backward has returned.
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/transport.h"
#include "graph/parameters.h"
#include "tensors/backend.h"
#include "training/exchange/gradient_buckets.h"

namespace marian {

class OverlappedAllreduce {
public:
  // reduceBucket(b) does the work of bucket b (called on the communication thread, lane 1 of
  // every GPU); devices: the node's devices, whose backward passes report to gradientReady;
  // afterBackward (optional): the thread's last work of every update, after every bucket and
  // every device's backwardDone.
  OverlappedAllreduce(const Parameters& layout, const std::vector<GradientBucket>& buckets, std::vector<Device> devices,
                      Transport& transport, std::function<void(size_t bucket)> reduceBucket,
                      std::function<void()> afterBackward = nullptr);
  ~OverlappedAllreduce();

  // Before an update's backward passes: which devices compute (the others' gradients are zero
  // and final).
  void start(const std::vector<char>& active);
  // Device d's backward says that parameter `param`'s gradient is final (its compute thread).
  void gradientReady(size_t d, size_t param);
  // Device d's backward has returned (its compute thread; on a GPU: its kernels are issued).
  void backwardDone(size_t d);
  // After the backward passes (also when one failed: failed = true, and the buckets not yet
  // started are left alone): waits until every bucket is reduced; rethrows the thread's error.
  void finish(bool failed = false);

  // Seconds the last update waited in finish() for the communication thread (the allreduce time
  // backward did not hide), and the thread's busy seconds in that update.
  double lastWaitSeconds() const { return lastWait_; }
  double lastBusySeconds() const { return lastBusy_; }

private:
  void run();
  // GPUs: this thread's lane of every device waits until `event` (a device's point) has passed.
  void waitOnEveryLane(DeviceEvent* event);

  size_t buckets_;
  std::vector<size_t> bucketOf_;      // by parameter index
  std::vector<size_t> paramsIn_;      // parameters per bucket
  std::vector<Device> devices_;
  Transport& transport_;
  std::function<void(size_t)> reduceBucket_;
  std::function<void()> afterBackward_;
  // GPU: device d's point where bucket b was final ([d][b]), and where its backward ended; the
  // thread's lane waits for them
  std::vector<std::vector<std::unique_ptr<DeviceEvent>>> finalOn_;
  std::vector<std::unique_ptr<DeviceEvent>> backwardEndOn_;

  // per update; remaining_[d] is written by device d's thread only
  std::vector<std::vector<size_t>> remaining_;
  std::vector<char> active_;
  size_t firstActive_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<size_t> devicesLeft_;  // per bucket: active devices that have not finished it
  size_t devicesInBackward_ = 0;     // active devices whose backward has not returned
  std::vector<size_t> order_;        // the order buckets run in (fixed at the first update)
  std::vector<size_t> firstOrder_;   // the first update: the order device firstActive_ finished them
  bool updating_ = false, failed_ = false, stop_ = false;
  std::exception_ptr error_;
  double lastWait_ = 0, lastBusy_ = 0;
  std::thread thread_;
};

}  // namespace marian
