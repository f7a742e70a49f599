#pragma once
// defines: cpu::setKernelThreads, cpu::parallelRanges — the threads one CPU device's kernels
// split their work over. A single device training on several cores gives BLAS all of them; the
// element-wise, softmax, cross-entropy, layer-norm and optimizer kernels between the products
// would otherwise leave all but one core idle (a quarter of a step on 2 cores). Those kernels
// compute each part exactly as on one thread (no reduction crosses parts): their results do not
// depend on the count. Products split by cpu/gemm.cpp agree with one thread's to float rounding
// only (BLAS may block a part differently from the whole; test_kernels checks both).
#include <cstddef>
#include <functional>

namespace marian {
namespace cpu {

// The threads of each device, the caller's included (setBlasThreads: a device's share of the
// cores; BLAS runs single-threaded inside each, cpu/gemm.cpp splitting the products). Every
// thread that calls kernels (one per device) gets workers of its own on its first parallel kernel.
void setKernelThreads(int threads);
int kernelThreads();

// Calls f(begin, end) on consecutive parts of [0, n) on the kernel threads and returns when all
// are done; on the caller alone when n < minParallel or with one thread. An exception of any part
// is rethrown.
void parallelRanges(size_t n, size_t minParallel, const std::function<void(size_t, size_t)>& f);

// Below this many elements a kernel is not worth waking a thread for (a few microseconds).
constexpr size_t kParallelElements = size_t(1) << 15;
// parallelRanges over the rows of a [rows, width] kernel, worth it from kParallelElements on
inline void parallelRows(size_t rows, size_t width, const std::function<void(size_t, size_t)>& f) {
  parallelRanges(rows, kParallelElements / (width ? width : 1) + 1, f);
}

}  // namespace cpu
}  // namespace marian
