#include "data/window_workers.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

namespace marian {

namespace {
pid_t thisThread() { return pid_t(syscall(SYS_gettid)); }

}  // namespace

// tried once on a thread of its own
bool WindowWorkers::mayLeaveIdle() {
  static const bool may = [] {
    bool ok = false;
    std::thread probe([&] {
      sched_param p{};
      ok = sched_setscheduler(0, SCHED_IDLE, &p) == 0 && sched_setscheduler(0, SCHED_OTHER, &p) == 0;
    });
    probe.join();
    return ok;
  }();
  return may;
}

void WindowWorkers::apply(pid_t tid) const {
  sched_param normal{};
  // failure (a policy the system refuses) leaves the thread as it is: priority is an optimisation
  sched_setscheduler(tid, urgent_ || !mayLeaveIdle() ? SCHED_OTHER : SCHED_IDLE, &normal);
}

void WindowWorkers::join() {
  std::lock_guard<std::mutex> lock(mutex_);
  threads_.push_back(thisThread());
  apply(threads_.back());
}

void WindowWorkers::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(threads_.begin(), threads_.end(), thisThread());  // one joining (the producer
  if(it != threads_.end())                                             // also encodes)
    threads_.erase(it);
}

void WindowWorkers::setUrgent(bool urgent) {
  std::lock_guard<std::mutex> lock(mutex_);
  if(urgent_ == urgent)
    return;
  urgent_ = urgent;
  for(pid_t tid : threads_)
    apply(tid);
}

EncodingControl WindowWorkers::control() {
  EncodingControl c;
  c.onThreadStart = [this] { join(); };
  c.onThreadEnd = [this] { leave(); };
  c.cancelled = &cancelled_;
  return c;
}

}  // namespace marian
