#pragma once
// defines: parallelFor — runs f(0..n-1) on n threads (f(0) on the caller's) and rethrows the
// first exception. One thread per CPU device: the devices of a node run their phases together.
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "common/float_mode.h"

namespace marian {

inline void parallelFor(size_t n, const std::function<void(size_t)>& f) {
  if(n == 1) {
    f(0);
    return;
  }
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for(size_t i = 1; i < n; ++i)
    threads.emplace_back([&, i] {
      flushDenormalsToZero();
      try {
        f(i);
      } catch(...) {
        errors[i] = std::current_exception();
      }
    });
  try {
    f(0);
  } catch(...) {
    errors[0] = std::current_exception();
  }
  for(std::thread& t : threads)
    t.join();
  for(auto& e : errors)
    if(e)
      std::rethrow_exception(e);
}

}  // namespace marian
