// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>

#include "tensors/cpu/cpu_kernels.h"
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
}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  sgemm(C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  checks::BatchedDims b = checks::batchedDims(C, A, B, transA, transB);
  // A result batch of 1 sums the products (the gradient of a broadcast operand).
  for(size_t i = 0; i < b.batch; ++i)
    sgemm(C.f32() + (b.batchC == 1 ? 0 : i * b.sizeC), A.f32() + (b.batchA == 1 ? 0 : i * b.sizeA),
          B.f32() + (b.batchB == 1 ? 0 : i * b.sizeB), b.d, transA, transB, alpha,
          b.batchC == 1 && i > 0 ? 1.f : beta);
}

}  // namespace cpu
}  // namespace marian
