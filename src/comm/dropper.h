#pragma once
// defines: sampledThreshold and GradientDropper — gradient dropping (Aji & Heafield 2017): keep
// the largest-magnitude fraction of a gradient, remember the rest as a residual that is added to
// the next gradient, so that nothing is lost, only delayed.
#include <cstdint>
#include <random>
#include <vector>

#include "comm/sparse_vector.h"

namespace marian {

// A magnitude threshold that about `keep` of the n values reach: the (1 - keep) quantile of
// |x| over a random sample of max(1000, n/100) positions (exact when n is small).
float sampledThreshold(const float* x, size_t n, double keep, std::mt19937_64& rng);

// The entries of x with |x| >= threshold, as a sparse vector of x's range.
SparseVector selectAbove(const float* x, size_t n, float threshold);

class GradientDropper {
public:
  GradientDropper(size_t size, uint64_t seed) : residual_(size, 0.f), rng_(seed) {}

  // Adds the residual to grads [offset, offset+n) of the range this dropper covers, sends the
  // largest `keep` fraction and keeps the rest as the new residual. Afterwards
  // sent + residual == grads + old residual exactly (entries move, they are never rounded).
  SparseVector drop(const float* grads, size_t offset, size_t n, double keep);

  const std::vector<float>& residual() const { return residual_; }

private:
  std::vector<float> residual_;
  std::mt19937_64 rng_;
};

}  // namespace marian
