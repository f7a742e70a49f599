#pragma once
// defines: marian::gpu — the CUDA implementations of tensors/kernels.h (built with MARIAN_CUDA).
#include <array>
#include <cstdint>
#include <vector>

#include "tensors/functors.h"
#include "tensors/tensor.h"

namespace marian {
namespace gpu {
#include "tensors/backend_kernels.inc"
}  // namespace gpu
}  // namespace marian
