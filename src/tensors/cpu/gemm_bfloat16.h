#pragma once
// defines: cpu::gemmBfloat16 — the CPU's products with bfloat16 inputs and float32 sums and
// results (cpu/gemm.cpp sends them here when this thread's product type is bfloat16 or an operand
// is a bfloat16 tensor already).
#include "tensors/tensor.h"

namespace marian {
namespace cpu {

// gemm of tensors/backend_kernels.inc with float32 operands rounded to bfloat16: a parameter's
// from the rounded copy of tensors/product_precision.h, any other once per call into this
// thread's scratch. (Batched products, small, multiply bfloat16 values in float32: cpu/gemm.cpp.)
void gemmBfloat16(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta);

}  // namespace cpu
}  // namespace marian
