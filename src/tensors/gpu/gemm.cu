// Matrix products through cuBLAS. cuBLAS is column-major: a row-major C = op(A) op(B) is the
// column-major C^T = op(B)^T op(A)^T, so every call passes B before A.
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

struct MatDims {
  int m, n, k;
};

MatDims productDims(int ra, int ca, int rb, int cb, bool transA, bool transB, const char* what,
                    const Shape& sa, const Shape& sb) {
  int m = transA ? ca : ra, ka = transA ? ra : ca;
  int kb = transB ? cb : rb, n = transB ? rb : cb;
  ABORT_IF(ka != kb, "{}: inner dimensions differ for {}{} x {}{}", what, sa.toString(),
           transA ? "^T" : "", sb.toString(), transB ? "^T" : "");
  return {m, n, ka};
}

void sgemm(const Context& c, float* C, const float* A, const float* B, MatDims d, bool transA,
           bool transB, float alpha, float beta, int batch = 1, long long strideA = 0,
           long long strideB = 0, long long strideC = 0) {
  if(d.m == 0 || d.n == 0)
    return;
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n);  // k may be 0
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  if(batch == 1)
    CUBLAS_CHECK(cublasSgemm(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, ldb, A, lda, &beta, C, d.n));
  else
    CUBLAS_CHECK(cublasSgemmStridedBatched(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, ldb, strideB,
                                           A, lda, strideA, &beta, C, d.n, strideC, batch));
}

}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  MatDims d = productDims(int(A.shape.rows()), A.shape.back(), int(B.shape.rows()), B.shape.back(),
                          transA, transB, "gemm", A.shape, B.shape);
  ABORT_IF(C.shape.rows() != size_t(d.m) || C.shape.back() != d.n,
           "gemm: result {} should be [{}x{}]", C.shape.toString(), d.m, d.n);
  sgemm(context(C), C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  ABORT_IF(A.shape.rank() < 2 || B.shape.rank() < 2, "gemmBatched needs matrices, got {} and {}",
           A.shape.toString(), B.shape.toString());
  MatDims d = productDims(A.shape[-2], A.shape[-1], B.shape[-2], B.shape[-1], transA, transB,
                          "gemmBatched", A.shape, B.shape);
  size_t sizeA = size_t(A.shape[-2]) * A.shape[-1], sizeB = size_t(B.shape[-2]) * B.shape[-1];
  size_t sizeC = size_t(d.m) * d.n;
  size_t batchA = A.size() / std::max<size_t>(sizeA, 1), batchB = B.size() / std::max<size_t>(sizeB, 1);
  size_t batchC = C.size() / std::max<size_t>(sizeC, 1);
  size_t batch = std::max(batchA, batchB);
  ABORT_IF((batchA != batch && batchA != 1) || (batchB != batch && batchB != 1) ||
               (batchC != batch && batchC != 1) || C.shape[-2] != d.m || C.shape[-1] != d.n,
           "gemmBatched: batches of {}, {} and result {} do not match", A.shape.toString(),
           B.shape.toString(), C.shape.toString());
  const Context& c = context(C);
  if(batchC == batch) {  // one strided call; a broadcast operand has stride 0
    sgemm(c, C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta, int(batch),
          batchA == 1 ? 0 : (long long)sizeA, batchB == 1 ? 0 : (long long)sizeB, (long long)sizeC);
    return;
  }
  // A result batch of 1 sums the products (the gradient of a broadcast operand).
  for(size_t i = 0; i < batch; ++i)
    sgemm(c, C.f32(), A.f32() + (batchA == 1 ? 0 : i * sizeA), B.f32() + (batchB == 1 ? 0 : i * sizeB),
          d, transA, transB, alpha, i > 0 ? 1.f : beta);
}

}  // namespace gpu
}  // namespace marian
