#pragma once
// defines: marian::BatchQueue — hands batches from the trainer to device threads that work on
// their own (async SGD, the multi-node clients), at most `capacity` waiting, and collects what
// the devices finished and the first error one of them raised.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

#include "training/graph_groups/graph_group.h"

namespace marian {

struct BatchWork {
  Batch batch;
  uint64_t update = 0;
  float lr = 0;
};

class BatchQueue {
public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}

  // Trainer side: waits while `capacity` batches wait; rethrows a device's error.
  void push(BatchWork work) {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.size() < capacity_ || error_; });
    rethrow();
    queue_.push_back(std::move(work));
    wake_.notify_one();
  }
  // What the devices finished since the last call.
  StepStats takeFinished() {
    std::lock_guard<std::mutex> lock(mutex_);
    StepStats s = finished_;
    finished_ = StepStats();
    return s;
  }
  // Until no batch waits or is being worked on; rethrows a device's error.
  void waitIdle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return (queue_.empty() && busy_ == 0) || error_; });
    rethrow();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }

  // Device side: runs work(batch) for every batch until stop(); returns then.
  template <class Work>
  void serve(Work&& work) {
    for(;;) {
      BatchWork next;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if(queue_.empty())
          return;
        next = std::move(queue_.front());
        queue_.pop_front();
        ++busy_;
      }
      idle_.notify_all();
      StepStats stats;
      try {
        stats = work(next);
      } catch(...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if(!error_)
          error_ = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --busy_;
        finished_.ceSum += stats.ceSum;
        finished_.labels += stats.labels;
        finished_.sentences += stats.sentences;
        finished_.alignmentPoints += stats.alignmentPoints;
      }
      idle_.notify_all();
    }
  }

  // For errors raised outside serve() (a communication thread).
  void fail(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if(!error_)
        error_ = e;
    }
    idle_.notify_all();
  }

private:
  void rethrow() {
    if(error_)
      std::rethrow_exception(error_);
  }

  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<BatchWork> queue_;
  size_t busy_ = 0;
  bool stopping_ = false;
  StepStats finished_;
  std::exception_ptr error_;
};

}  // namespace marian
