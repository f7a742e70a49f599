// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/gemm_bfloat16.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"
#include "tensors/product_precision.h"

namespace marian {
namespace cpu {

namespace {
using checks::MatDims;

// C [m x n] (row stride ldc) = alpha * op(A) op(B) + beta * C
void sgemm(float* C, const float* A, const float* B, int m, int n, int k, int lda, int ldb, int ldc, bool transA,
           bool transB, float alpha, float beta) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              A, lda, B, ldb, beta, C, ldc);
}
void sgemm(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB, float alpha, float beta) {
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n);  // k may be 0
  return sgemm(C, A, B, d.m, d.n, d.k, lda, ldb, d.n, transA, transB, alpha, beta);
}

// One product on the kernel threads: BLAS runs single-threaded in each of them (setBlasThreads),
// on a block of C's rows, or of its columns when it has few rows. The one set of threads serves
// the products and the kernels between them, so no idle BLAS thread competes for the cores.
constexpr size_t kParallelProduct = size_t(1) << 18;  // multiply-adds; below, one thread
void sgemmThreaded(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB,
                   float alpha, float beta) {
  size_t work = size_t(d.m) * d.n * std::max(d.k, 1);
  if(work < kParallelProduct || kernelThreads() == 1)
    return sgemm(C, A, B, d, transA, transB, alpha, beta);
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n), ldc = d.n;
  if(d.m >= d.n)  // rows of C: rows of op(A)
    parallelRanges(size_t(d.m), 16, [&](size_t r0, size_t r1) {
      sgemm(C + r0 * ldc, transA ? A + r0 : A + r0 * lda, B, int(r1 - r0), d.n, d.k, lda, ldb, ldc, transA, transB,
            alpha, beta);
    });
  else  // columns of C: columns of op(B)
    parallelRanges(size_t(d.n), 16, [&](size_t c0, size_t c1) {
      sgemm(C + c0, A, transB ? B + c0 * ldb : B + c0, d.m, int(c1 - c0), d.k, lda, ldb, ldc, transA, transB, alpha,
            beta);
    });
}
bool lowPrecision(const Tensor& A, const Tensor& B) {
  return currentProductType() != ProductType::float32 || A.type != Type::float32 || B.type != Type::float32;
}
}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  if(lowPrecision(A, B))
    return gemmBfloat16(C, A, B, transA, transB, alpha, beta, false);
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  sgemmThreaded(C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  if(lowPrecision(A, B))
    return gemmBfloat16(C, A, B, transA, transB, alpha, beta, true);
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
