#include "comm/dropper.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace marian {

SparseVector GradientDropper::drop(const float* grads, size_t offset, size_t n, double keep) {
  ABORT_IF(offset + n > residual_.size(), "Dropping [{}, {}) of a range of {}", offset, offset + n,
           residual_.size());
  float* r = residual_.data() + offset;
  for(size_t i = 0; i < n; ++i)
    r[i] += grads[i];
  float t = sampledThreshold(r, n, keep, rng_);
  SparseVector sent = selectAbove(r, n, t);
  for(uint32_t i : sent.indices)
    r[i] = 0.f;
  return sent;
}

}  // namespace marian
