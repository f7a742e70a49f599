#pragma once
// defines: marian::kernels — every tensor computation the graph needs (the list, documented, is
// tensors/backend_kernels.inc). Each call runs on the device of its tensors (CPU reference in
// tensors/cpu/, GPU beside it in tensors/gpu/; the dispatch: kernels.cpp); callers never name a
// backend.
#include <array>
#include <cstdint>
#include <vector>

#include "tensors/functors.h"
#include "tensors/tensor.h"

namespace marian {
namespace kernels {

#include "tensors/backend_kernels.inc"

// --- between the host and a device (the backends' copyToHost/copyFromHost) ----------------------
std::vector<float> toHost(Tensor t);
void fromHost(Tensor t, const std::vector<float>& values);
void fromHostInts(Tensor t, const std::vector<int>& values);

inline void scatterAdd(Tensor dense, const std::vector<uint32_t>& indices, const std::vector<float>& values) {
  scatterAdd(dense, indices.data(), values.data(), indices.size());
}

}  // namespace kernels
}  // namespace marian
