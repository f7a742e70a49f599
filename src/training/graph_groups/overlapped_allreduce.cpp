#include "training/graph_groups/overlapped_allreduce.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "common/float_mode.h"
#include "common/timeline.h"

namespace marian {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

OverlappedAllreduce::OverlappedAllreduce(const Parameters& layout, const std::vector<GradientBucket>& buckets,
                                         std::vector<Device> devices, Transport& transport,
                                         std::function<void(size_t)> reduceBucket,
                                         std::function<void()> afterBackward)
    : buckets_(buckets.size()), paramsIn_(buckets.size(), 0), devices_(std::move(devices)), transport_(transport),
      reduceBucket_(std::move(reduceBucket)), afterBackward_(std::move(afterBackward)),
      remaining_(devices_.size()), devicesLeft_(buckets.size(), 0) {
  bucketOf_ = bucketOfEachParameter(layout, buckets);
  for(size_t b : bucketOf_)
    ++paramsIn_[b];
  finalOn_.resize(devices_.size());
  for(size_t d = 0; d < devices_.size(); ++d) {
    for(size_t b = 0; b < buckets_; ++b)
      finalOn_[d].push_back(backendFor(devices_[d]).createEvent());  // null on the CPU
    backwardEndOn_.push_back(backendFor(devices_[d]).createEvent());
  }
  thread_ = std::thread([this] { run(); });
}

OverlappedAllreduce::~OverlappedAllreduce() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    failed_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void OverlappedAllreduce::start(const std::vector<char>& active) {
  std::lock_guard<std::mutex> lock(mutex_);
  ABORT_IF(updating_, "OverlappedAllreduce::start while an update is under way");
  ABORT_IF(active.size() != devices_.size(), "OverlappedAllreduce: {} flags for {} devices", active.size(),
           devices_.size());
  active_ = active;
  size_t count = size_t(std::count(active.begin(), active.end(), 1));
  firstActive_ = size_t(std::find(active.begin(), active.end(), 1) - active.begin());
  std::fill(devicesLeft_.begin(), devicesLeft_.end(), count);
  devicesInBackward_ = count;
  for(size_t d = 0; d < devices_.size(); ++d)
    remaining_[d] = active[d] ? paramsIn_ : std::vector<size_t>(buckets_, 0);
  firstOrder_.clear();
  failed_ = false;
  updating_ = true;
  changed_.notify_all();
}

void OverlappedAllreduce::gradientReady(size_t d, size_t param) {
  size_t b = bucketOf_[param];
  if(--remaining_[d][b] != 0)
    return;
  if(DeviceEvent* event = finalOn_[d][b].get())  // on a GPU: once the kernels issued so far ran
    backendFor(devices_[d]).record(event);
  std::lock_guard<std::mutex> lock(mutex_);
  if(d == firstActive_ && order_.empty())
    firstOrder_.push_back(b);
  if(--devicesLeft_[b] == 0) {
    changed_.notify_all();
    if(timeline::enabled())  // the hand-over, inside the backward of the device that finished it last
      timeline::instant("bucket ready", std::to_string(b));
  }
}

void OverlappedAllreduce::backwardDone(size_t d) {
  if(DeviceEvent* event = backwardEndOn_[d].get())
    backendFor(devices_[d]).record(event);
  std::lock_guard<std::mutex> lock(mutex_);
  if(--devicesInBackward_ == 0)
    changed_.notify_all();
}

void OverlappedAllreduce::finish(bool failed) {
  double begin = now();
  std::unique_lock<std::mutex> lock(mutex_);
  if(failed) {
    failed_ = true;
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return !updating_; });
  lastWait_ = now() - begin;
  if(error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void OverlappedAllreduce::waitOnEveryLane(DeviceEvent* event) {
  if(event)  // null on the CPU
    for(const Device& device : devices_)
      backendFor(device).wait(event);
}

void OverlappedAllreduce::run() {
  flushDenormalsToZero();  // as the compute threads: the same sums bit for bit
  setDeviceLane(1);        // GPU transfers beside the compute stream, not behind it
  timeline::nameThisThread("allreduce");
  std::unique_lock<std::mutex> lock(mutex_);
  while(true) {
    changed_.wait(lock, [&] { return stop_ || updating_; });
    if(stop_)
      return;
    double busy = 0;
    try {
      if(order_.empty()) {  // the first update: every bucket, then the order every rank follows
        changed_.wait(lock, [&] {
          return failed_ || std::all_of(devicesLeft_.begin(), devicesLeft_.end(), [](size_t n) { return n == 0; });
        });
        if(!failed_) {
          std::vector<size_t> order = firstOrder_;
          lock.unlock();
          ABORT_IF(order.size() != buckets_, "Gradient buckets: backward finished {} of {}", order.size(),
                   buckets_);
          for(size_t& b : order)
            b = size_t(transport_.broadcastFromRoot(b, transport_.peerTimeout(), "the order of the gradient buckets"));
          lock.lock();
          order_ = order;
        }
      }
      for(size_t i = 0; i < order_.size() && !failed_; ++i) {
        size_t b = order_[i];
        changed_.wait(lock, [&] { return failed_ || devicesLeft_[b] == 0; });
        if(failed_)
          break;
        lock.unlock();
        double begin = now();
        for(size_t d = 0; d < devices_.size(); ++d)  // GPUs: this lane waits for the gradients' kernels
          if(active_[d])
            waitOnEveryLane(finalOn_[d][b].get());
        {
          timeline::Span span("allreduce bucket", "comm");
          reduceBucket_(b);
        }
        busy += now() - begin;
        lock.lock();
      }
      if(afterBackward_ && !failed_) {
        changed_.wait(lock, [&] { return failed_ || devicesInBackward_ == 0; });
        if(!failed_) {
          lock.unlock();
          double begin = now();
          for(size_t d = 0; d < devices_.size(); ++d)
            if(active_[d])
              waitOnEveryLane(backwardEndOn_[d].get());
          {
            timeline::Span span("allreduce after backward", "comm");
            afterBackward_();
          }
          busy += now() - begin;
          lock.lock();
        }
      }
      lock.unlock();
      for(const Device& device : devices_)  // this lane's work is done before the update reads it
        if(device.type == DeviceType::gpu)
          backendFor(device).synchronize();
      lock.lock();
    } catch(...) {
      if(!lock.owns_lock())
        lock.lock();
      error_ = std::current_exception();
    }
    lastBusy_ = busy;
    updating_ = false;
    changed_.notify_all();
  }
}

}  // namespace marian
