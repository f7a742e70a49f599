#pragma once
// defines: clipFactor, clipGradients — the divergence check and --clip-norm of every graph group:
// a gradient norm that is not finite stops training naming the update; one above --clip-norm
// (when > 0) is scaled down to it.
#include <cmath>
#include <cstdint>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

// The factor a gradient of this squared norm is scaled by (1: not clipped); `update` counts from 0.
// clipNorm: --clip-norm, or a part's share of it (1-bit Adam clips each bucket of a rank's own).
inline float clipFactor(double squaredNorm, double clipNorm, uint64_t update) {
  double norm = std::sqrt(squaredNorm);
  ABORT_IF(!std::isfinite(norm), "Gradient norm is {} at update {}: training diverged", norm, update + 1);
  return clipNorm > 0 && norm > clipNorm ? float(clipNorm / norm) : 1.f;
}

// A whole gradient, checked and clipped in place.
inline void clipGradients(Tensor grads, float clipNorm, uint64_t update) {
  float factor = clipFactor(kernels::squaredNorm(grads), clipNorm, update);
  if(factor != 1.f)
    kernels::scale(grads, factor);
}

}  // namespace marian
