#pragma once
// defines: cpu::ThreadLeases<T>::get() — this thread's T, leased from a process-wide pool and returned
// to it when the thread ends, so that the device threads parallelFor starts anew every update find
// the state of earlier ones (oneDNN's primitives, scratch buffers already paged in) instead of
// building it again.
#include <memory>
#include <mutex>
#include <vector>

namespace marian {
namespace cpu {

template <class T>
class ThreadLeases {
public:
  // this thread's T; `fresh` is set where it was made or taken from the pool just now
  static T& get(bool* fresh = nullptr) {
    thread_local Lease lease;
    if(fresh)
      *fresh = !lease.value;
    if(!lease.value) {
      {
        std::lock_guard<std::mutex> lock(mutex());
        if(!pool().empty()) {
          lease.value = std::move(pool().back());
          pool().pop_back();
        }
      }
      if(!lease.value)
        lease.value = std::make_unique<T>();
    }
    return *lease.value;
  }

private:
  struct Lease {
    std::unique_ptr<T> value;
    ~Lease() {
      if(!value)
        return;
      std::lock_guard<std::mutex> lock(mutex());
      pool().push_back(std::move(value));
    }
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<std::unique_ptr<T>>& pool() {
    static std::vector<std::unique_ptr<T>> p;
    return p;
  }
};

}  // namespace cpu
}  // namespace marian
