// Matrix products through OpenBLAS (cblas, row-major).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "tensors/cpu/bfloat16.h"
#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/gemm_bfloat16.h"
#include "tensors/cpu/product_split.h"
#include "tensors/cpu/thread_lease.h"
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

// The float32 operands of a batched product with bfloat16 inputs, one pair a thread (leased: the
// device threads start anew every update, and new buffers would page in every time)
struct BatchedOperands {
  std::vector<float> a, b;
};

// An operand's bfloat16 values as float32, in `values` where t is not bfloat16's values already
Tensor bfloat16ValuesAsFloat32(const Tensor& t, std::vector<float>& values) {
  if(values.size() < t.size())
    values.resize(t.size());
  Tensor out(values.data(), t.shape, Type::float32, t.device);
  if(t.type == Type::bfloat16) {
    convert(out, t);
    return out;
  }
  const float* in = t.f32();
  parallelRanges(t.size(), kParallelElements, [&](size_t b, size_t e) { bfloat16Values(values.data() + b, in + b, e - b); });
  return out;
}
}  // namespace

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  if(lowPrecision(A, B))
    return gemmBfloat16(C, A, B, transA, transB, alpha, beta);
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  sgemmThreaded(C.f32(), A.f32(), B.f32(), d, transA, transB, alpha, beta);
}

void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  // A batch of small products (attention's heads, about 20 x 20 x 64 each) with bfloat16 inputs
  // multiplies their bfloat16 values in float32: each product of two bfloat16 values is exact in
  // float32 and the sums are float32's, as in oneDNN's kernels, which at these sizes pack every
  // product and ran 2.6x slower than OpenBLAS's (docs/precision.md).
  if(lowPrecision(A, B)) {
    ABORT_IF(currentProductType() == ProductType::float16, "{}", cpuLacksProductType(ProductType::float16));
    BatchedOperands& values = ThreadLeases<BatchedOperands>::get();
    A = bfloat16ValuesAsFloat32(A, values.a);
    B = bfloat16ValuesAsFloat32(B, values.b);
  }
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
