#pragma once
// defines: cpu::gemmBfloat16 — the CPU's products with bfloat16 inputs and float32 sums and
// results (cpu/gemm.cpp sends them here when this thread's product type is bfloat16 or an operand
// is a bfloat16 tensor already).
#include "tensors/tensor.h"

namespace marian {
namespace cpu {

// gemm (batched: gemmBatched) of tensors/backend_kernels.inc with float32 operands rounded to
// bfloat16: a parameter's from the rounded copy of tensors/product_precision.h, any other once per
// call into this thread's scratch.
void gemmBfloat16(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta, bool batched);

}  // namespace cpu
}  // namespace marian
