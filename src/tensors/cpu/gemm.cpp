// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>

#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace cpu {

namespace {
struct MatDims {
  int m, n, k;
};

// The product's dimensions from the stored matrices [ra, ca] and [rb, cb].
MatDims productDims(int ra, int ca, int rb, int cb, bool transA, bool transB, const char* what,
                    const Shape& sa, const Shape& sb) {
  int m = transA ? ca : ra, ka = transA ? ra : ca;
  int kb = transB ? cb : rb, n = transB ? rb : cb;
  ABORT_IF(ka != kb, "{}: inner dimensions differ for {}{} x {}{}", what, sa.toString(),
           transA ? "^T" : "", sb.toString(), transB ? "^T" : "");
  return {m, n, ka};
}

void sgemm(float* C, const float* A, const float* B, MatDims d, bool transA, bool transB,
           float alpha, float beta) {
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n);  // k may be 0
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, alpha, A, lda, B, ldb, beta, C, d.n);
}
}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  MatDims d = productDims(int(A.shape.rows()), A.shape.back(), int(B.shape.rows()), B.shape.back(),
                          transA, transB, "gemm", A.shape, B.shape);
  ABORT_IF(C.shape.rows() != size_t(d.m) || C.shape.back() != d.n,
           "gemm: result {} should be [{}x{}]", C.shape.toString(), d.m, d.n);
  sgemm(C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  ABORT_IF(A.shape.rank() < 2 || B.shape.rank() < 2, "gemmBatched needs matrices, got {} and {}",
           A.shape.toString(), B.shape.toString());
  MatDims d = productDims(A.shape[-2], A.shape[-1], B.shape[-2], B.shape[-1], transA, transB,
                          "gemmBatched", A.shape, B.shape);
  size_t sizeA = size_t(A.shape[-2]) * A.shape[-1], sizeB = size_t(B.shape[-2]) * B.shape[-1];
  size_t sizeC = size_t(d.m) * d.n;
  size_t batchA = A.size() / sizeA, batchB = B.size() / sizeB, batchC = C.size() / std::max<size_t>(sizeC, 1);
  size_t batch = std::max(batchA, batchB);
  // A result batch of 1 sums the products (the gradient of a broadcast operand).
  ABORT_IF((batchA != batch && batchA != 1) || (batchB != batch && batchB != 1) ||
               (batchC != batch && batchC != 1) || C.shape[-2] != d.m || C.shape[-1] != d.n,
           "gemmBatched: batches of {}, {} and result {} do not match", A.shape.toString(),
           B.shape.toString(), C.shape.toString());
  for(size_t i = 0; i < batch; ++i)
    sgemm(C.f32() + (batchC == 1 ? 0 : i * sizeC), A.f32() + (batchA == 1 ? 0 : i * sizeA),
          B.f32() + (batchB == 1 ? 0 : i * sizeB), d, transA, transB, alpha,
          batchC == 1 && i > 0 ? 1.f : beta);
}

}  // namespace cpu
}  // namespace marian
