#pragma once
// defines: sampledThreshold and GradientDropper — gradient dropping (Aji & Heafield 2017): keep
// the largest-magnitude fraction of a gradient, remember the rest as a residual that is added to
// the next gradient, so that nothing is lost, only delayed. On a GPU the residual stays on the
// GPU and the threshold and selection run there: only the kept entries cross to the host.
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "comm/sparse_vector.h"
#include "comm/topk_selection.h"
#include "tensors/arena.h"

namespace marian {

class GradientDropper {
public:
  GradientDropper(size_t size, uint64_t seed, Device device = cpuDevice());

  // Adds the residual to grads [offset, offset+n) of the range this dropper covers, sends the
  // largest `keep` fraction and keeps the rest as the new residual. Afterwards
  // sent + residual == grads + old residual exactly (entries move, they are never rounded).
  SparseVector drop(const float* grads, size_t offset, size_t n, double keep);
  // The same for gradients on this dropper's device (grads holds the n values of the range).
  SparseVector drop(Tensor grads, size_t offset, double keep);

  std::vector<float> residual() const;
  Device device() const { return device_; }

private:
  Device device_;
  std::vector<float> residual_;             // on the host (CPU devices)
  std::unique_ptr<FlatBuffer> onDevice_;    // on the GPU (from the first drop)
  size_t size_;
  std::mt19937_64 rng_;
  uint64_t seed_, calls_ = 0;
};

}  // namespace marian
