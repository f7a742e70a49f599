// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

namespace {
using checks::MatDims;

void sgemm(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB,
           float alpha, float beta) {
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n);  // k may be 0
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, alpha, A, lda, B, ldb, beta, C, d.n);
}

// One product on the kernel threads: BLAS runs single-threaded in each of them (setBlasThreads),
// on a block of C's rows, or of its columns when it has few rows. The one set of threads serves
// the products and the kernels between them, so no idle BLAS thread competes for the cores.
constexpr size_t kParallelProduct = size_t(1) << 18;  // multiply-adds; below, one thread
void sgemmThreaded(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB,
                   float alpha, float beta) {
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n), ldc = d.n;
  size_t work = size_t(d.m) * d.n * std::max(d.k, 1);
  if(work < kParallelProduct || kernelThreads() == 1)
    return sgemm(C, A, B, d, transA, transB, alpha, beta);
  auto part = [&](int m, int n, const float* a, const float* b, float* c) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, d.k,
                alpha, a, lda, b, ldb, beta, c, ldc);
  };
  if(d.m >= d.n)  // rows of C: rows of op(A)
    parallelRanges(size_t(d.m), 16, [&](size_t r0, size_t r1) {
      part(int(r1 - r0), d.n, transA ? A + r0 : A + r0 * lda, B, C + r0 * ldc);
    });
  else  // columns of C: columns of op(B)
    parallelRanges(size_t(d.n), 16, [&](size_t c0, size_t c1) {
      part(d.m, int(c1 - c0), A, transB ? B + c0 * ldb : B + c0, C + c0);
    });
}
}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  sgemmThreaded(C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  checks::BatchedDims b = checks::batchedDims(C, A, B, transA, transB);
  auto product = [&](size_t i) {
    sgemm(C.f32() + (b.batchC == 1 ? 0 : i * b.sizeC), A.f32() + (b.batchA == 1 ? 0 : i * b.sizeA),
          B.f32() + (b.batchB == 1 ? 0 : i * b.sizeB), b.d, transA, transB, alpha,
          b.batchC == 1 && i > 0 ? 1.f : beta);
  };
  // A result batch of 1 sums the products (the gradient of a broadcast operand): in order, on
  // one thread. Otherwise the small products of a batch (attention's heads) go to the threads.
  if(b.batchC == 1) {
    for(size_t i = 0; i < b.batch; ++i)
      product(i);
    return;
  }
  size_t perProduct = size_t(b.d.m) * b.d.n * std::max(b.d.k, 1);
  parallelRanges(b.batch, kParallelProduct / (perProduct ? perProduct : 1) + 1, [&](size_t i0, size_t i1) {
    for(size_t i = i0; i < i1; ++i)
      product(i);
  });
}

}  // namespace cpu
}  // namespace marian
