#pragma once
// defines: cpu::splitProduct, cpu::splitBatch — how one matrix product, or a batch of them, is cut
// over the kernel threads, with the BLAS (cpu/gemm.cpp) or oneDNN (cpu/gemm_bfloat16.cpp) call
// single-threaded in each: a block of C's rows, or of its columns when it has few rows; whole
// products of a batch (BLAS's: batched products run there in every precision). The one set of
// threads serves the products and the kernels between them, so no idle BLAS thread competes for
// the cores.
#include <algorithm>
#include <cstddef>

#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

constexpr size_t kParallelProduct = size_t(1) << 18;  // multiply-adds; below, one thread

inline size_t multiplyAdds(const checks::MatDims& d) { return size_t(d.m) * d.n * std::max(d.k, 1); }

// part(r0, r1, c0, c1) computes the block of C's rows [r0, r1) and columns [c0, c1)
template <class Part>
void splitProduct(const checks::MatDims& d, const Part& part) {
  if(multiplyAdds(d) < kParallelProduct || kernelThreads() == 1)
    return part(size_t(0), size_t(d.m), size_t(0), size_t(d.n));
  if(d.m >= d.n)  // rows of C: rows of op(A)
    parallelRanges(size_t(d.m), 16, [&](size_t r0, size_t r1) { part(r0, r1, size_t(0), size_t(d.n)); });
  else  // columns of C: columns of op(B)
    parallelRanges(size_t(d.n), 16, [&](size_t c0, size_t c1) { part(size_t(0), size_t(d.m), c0, c1); });
}

// part(i0, i1) computes products [i0, i1) of a batch of products of d's size: enough of them on a
// thread to be worth waking it (attention's heads are small)
template <class Part>
void splitBatch(size_t batch, const checks::MatDims& d, const Part& part) {
  size_t each = multiplyAdds(d);
  parallelRanges(batch, kParallelProduct / (each ? each : 1) + 1, part);
}

}  // namespace cpu
}  // namespace marian
