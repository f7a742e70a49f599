// Matrix products through cuBLAS. cuBLAS is column-major: a row-major C = op(A) op(B) is the
// column-major C^T = op(B)^T op(A)^T, so every call passes B before A.
#include "tensors/gpu/cublas_library.h"
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"
#include "tensors/product_precision.h"

namespace marian {
namespace gpu {

namespace {

using checks::MatDims;

void sgemm(const Context& c, float* C, const float* A, const float* B, MatDims d, bool transA,
           bool transB, float alpha, float beta, int batch = 1, long long strideA = 0,
           long long strideB = 0, long long strideC = 0) {
  if(d.m == 0 || d.n == 0)
    return;
  int lda = std::max(1, transA ? d.m : d.k), ldb = std::max(1, transB ? d.k : d.n);  // k may be 0
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  ProductType type = currentProductType();
  if(type != ProductType::float32) {  // float32 in and out, inputs rounded on the tensor cores
    cublasComputeType_t compute = type == ProductType::float16 ? CUBLAS_COMPUTE_32F_FAST_16F : CUBLAS_COMPUTE_32F_FAST_16BF;
    if(batch == 1)
      CUBLAS_CHECK(cublasLibrary().gemmEx(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F,
                                          lda, &beta, C, CUDA_R_32F, d.n, compute, CUBLAS_GEMM_DEFAULT));
    else
      CUBLAS_CHECK(cublasLibrary().gemmStridedBatchedEx(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, CUDA_R_32F, ldb,
                                                        strideB, A, CUDA_R_32F, lda, strideA, &beta, C, CUDA_R_32F, d.n,
                                                        strideC, batch, compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  if(batch == 1)
    CUBLAS_CHECK(cublasLibrary().sgemm(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, ldb, A, lda, &beta, C, d.n));
  else
    CUBLAS_CHECK(cublasLibrary().sgemmStridedBatched(c.cublas, opB, opA, d.n, d.m, d.k, &alpha, B, ldb, strideB,
                                                     A, lda, strideA, &beta, C, d.n, strideC, batch));
}

}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  sgemm(context(C), C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  checks::BatchedDims b = checks::batchedDims(C, A, B, transA, transB);
  const Context& c = context(C);
  if(b.batchC == b.batch) {  // one strided call; a broadcast operand has stride 0
    sgemm(c, C.f32(), A.f32(), B.f32(), b.d, transA, transB, alpha, beta, int(b.batch),
          b.batchA == 1 ? 0 : (long long)b.sizeA, b.batchB == 1 ? 0 : (long long)b.sizeB, (long long)b.sizeC);
    return;
  }
  // A result batch of 1 sums the products (the gradient of a broadcast operand).
  for(size_t i = 0; i < b.batch; ++i)
    sgemm(c, C.f32(), A.f32() + (b.batchA == 1 ? 0 : i * b.sizeA), B.f32() + (b.batchB == 1 ? 0 : i * b.sizeB),
          b.d, transA, transB, alpha, i > 0 ? 1.f : beta);
}

}  // namespace gpu
}  // namespace marian
