#include "tensors/cpu/kernel_threads.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "common/float_mode.h"

namespace marian {
namespace cpu {

namespace {

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

std::atomic<int> threadsPerDevice{1};

// The workers of one calling thread (each device's thread has its own, so devices sharing a
// machine's cores each get their share). Workers wait for a job's generation number: briefly
// spinning (kernels come in quick succession within a step), then asleep on a condition variable
// (between steps).
class KernelPool {
public:
  static KernelPool& get() {
    thread_local KernelPool pool;
    int want = threadsPerDevice.load(std::memory_order_relaxed);
    if(pool.threads() != want)
      pool.resize(want);
    return pool;
  }

  void resize(int threads) {
    std::lock_guard<std::mutex> use(use_);
    stop();
    // a worker waits for the generation after this one even if it starts after the first job
    uint64_t now = generation_.load(std::memory_order_acquire);
    for(int i = 1; i < threads; ++i)
      workers_.emplace_back([this, i, now] { work(size_t(i), now); });
  }
  int threads() const { return int(workers_.size()) + 1; }

  void run(size_t n, size_t minParallel, const std::function<void(size_t, size_t)>& f) {
    size_t parts = workers_.size() + 1;
    std::unique_lock<std::mutex> use(use_, std::defer_lock);
    // busy: a kernel called from inside a part (none does today) runs on its caller
    if(parts == 1 || n < minParallel || n < parts || !use.try_lock())
      return f(0, n);
    job_ = &f;
    n_ = n;
    parts_ = parts;
    errors_.assign(parts, nullptr);
    pending_.store(int(parts) - 1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(wake_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wakeUp_.notify_all();
    runPart(0);
    while(pending_.load(std::memory_order_acquire) != 0)
      pause();
    for(std::exception_ptr& e : errors_)
      if(e)
        std::rethrow_exception(e);
  }

  ~KernelPool() { stop(); }

private:
  void runPart(size_t part) {
    size_t begin = n_ * part / parts_, end = n_ * (part + 1) / parts_;
    try {
      (*job_)(begin, end);
    } catch(...) {
      errors_[part] = std::current_exception();
    }
  }

  void work(size_t part, uint64_t seen) {
    flushDenormalsToZero();
    for(;;) {
      for(int spin = 0; spin < 2000 && generation_.load(std::memory_order_acquire) == seen; ++spin)
        pause();
      if(generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(wake_);
        wakeUp_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      }
      seen = generation_.load(std::memory_order_acquire);
      if(stopping_)
        return;
      runPart(part);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  // with use_ held
  void stop() {
    if(workers_.empty())
      return;
    {
      std::lock_guard<std::mutex> lock(wake_);
      stopping_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wakeUp_.notify_all();
    for(std::thread& t : workers_)
      t.join();
    workers_.clear();
    stopping_ = false;
  }

  std::mutex use_;  // one job at a time
  std::vector<std::thread> workers_;
  std::mutex wake_;
  std::condition_variable wakeUp_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  const std::function<void(size_t, size_t)>* job_ = nullptr;
  size_t n_ = 0, parts_ = 1;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace

void setKernelThreads(int threads) { threadsPerDevice.store(threads < 1 ? 1 : threads); }
int kernelThreads() { return threadsPerDevice.load(std::memory_order_relaxed); }

void parallelRanges(size_t n, size_t minParallel, const std::function<void(size_t, size_t)>& f) {
  KernelPool::get().run(n, minParallel, f);
}

}  // namespace cpu
}  // namespace marian
