#pragma once
// defines: marian::cpu — the CPU (reference) implementations of tensors/kernels.h.
#include <array>
#include <cstdint>
#include <vector>

#include "tensors/functors.h"
#include "tensors/tensor.h"

namespace marian {
namespace cpu {
#include "tensors/backend_kernels.inc"
}  // namespace cpu
}  // namespace marian
