#pragma once
// defines: sampledThreshold and GradientDropper — gradient dropping (Aji & Heafield 2017): keep
// the largest-magnitude fraction of a gradient, remember the rest as a residual that is added to
// the next gradient, so that nothing is lost, only delayed.
#include <cstdint>
#include <random>
#include <vector>

#include "comm/sparse_vector.h"
#include "comm/topk_selection.h"

namespace marian {

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
