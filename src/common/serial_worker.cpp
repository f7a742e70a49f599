#include "common/serial_worker.h"

#include "common/float_mode.h"
#include "common/timeline.h"

namespace marian {

SerialWorker::SerialWorker(std::string threadName)
    : threadName_(std::move(threadName)), thread_([this] { run(); }) {}

SerialWorker::~SerialWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  posted_.notify_all();
  thread_.join();
}

uint64_t SerialWorker::post(std::function<void()> job) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ticket = next_++;
    jobs_.emplace_back(ticket, std::move(job));
  }
  posted_.notify_all();
  return ticket;
}

void SerialWorker::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_ > ticket; });
  auto failed = failed_.find(ticket);
  if(failed != failed_.end()) {
    std::exception_ptr e = failed->second;
    failed_.erase(failed);
    std::rethrow_exception(e);
  }
}

void SerialWorker::waitAll() {
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if(next_ == 0)
      return;
    last = next_ - 1;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_ > last; });
}

void SerialWorker::run() {
  flushDenormalsToZero();
  timeline::nameThisThread(threadName_);
  for(;;) {
    std::pair<uint64_t, std::function<void()>> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      posted_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if(jobs_.empty())  // stopping with nothing left
        return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::exception_ptr error;
    try {
      job.second();
    } catch(...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if(error)
        failed_[job.first] = error;
      done_ = job.first + 1;
    }
    finished_.notify_all();
  }
}

}  // namespace marian
