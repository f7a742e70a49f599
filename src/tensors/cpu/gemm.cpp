// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/gemm_bfloat16.h"
#include "tensors/cpu/product_split.h"
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

void sgemmThreaded(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB,
                   float alpha, float beta) {
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n), ldc = d.n;
  splitProduct(d, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    sgemm(C + r0 * ldc + c0, transA ? A + r0 : A + r0 * lda, transB ? B + c0 * ldb : B + c0, int(r1 - r0),
          int(c1 - c0), d.k, lda, ldb, ldc, transA, transB, alpha, beta);
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
  splitBatch(b.batch, b.d, [&](size_t i0, size_t i1) {
    for(size_t i = i0; i < i1; ++i)
      product(i);
  });
}

}  // namespace cpu
}  // namespace marian
