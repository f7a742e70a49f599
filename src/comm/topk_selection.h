#pragma once
// defines: top-k selection of a gradient with error feedback (seeds 000-002, 004): exact
// (nth_element over all magnitudes), sampled (Aji & Heafield: the threshold of a sample) and
// reused (Ok-Topk: an exact threshold recomputed every few steps and applied in between), and
// TopkSelector, which keeps what it did not send as a residual added to the next gradient.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "comm/sparse_vector.h"
#include "tensors/arena.h"

namespace marian {

// The k-th largest |x| over all n values (0 when k >= n): exact, O(n) with a copy.
float exactThreshold(const float* x, size_t n, size_t k);
// A threshold about `keep` of the n values reach: the (1 - keep) quantile of |x| over one random
// position in each of max(1000, n/100) equal strata (all of x when n is small). Strata keep the
// reads in address order, so a 100 MB gradient costs a fraction of one pass over it.
float sampledThreshold(const float* x, size_t n, double keep, std::mt19937_64& rng);
// The entries of x with |x| >= threshold and x != 0, as a sparse vector of x's range; large
// ranges are scanned by several threads.
SparseVector selectAbove(const float* x, size_t n, float threshold);

enum class TopkMethod { exact, sampled, reuse };
TopkMethod parseTopkMethod(const std::string& name);  // "exact", "sampled", "reuse"

class TopkSelector {
public:
  // reuseEvery: with TopkMethod::reuse, the exact threshold is recomputed every this many calls.
  // device: where the residual lives; on a GPU the selection runs there and only the selected
  // entries come to the host.
  TopkSelector(size_t n, TopkMethod method, uint64_t seed, int reuseEvery = 32,
               Device device = cpuDevice());

  // Adds x (n values) into the residual and takes out about k of its largest-magnitude entries,
  // which it returns; sent + residual afterwards == old residual + x, exactly.
  SparseVector select(const float* x, size_t k);
  // The same with x (n values) on the selector's device.
  SparseVector select(Tensor x, size_t k);
  // Puts the entries of `sent` whose index is not in `kept` back into the residual: what a global
  // top-k scheme did not select stays for later (seed 001 Alg. 4 line 10, seed 002 Alg. 2).
  void restoreUnselected(const SparseVector& sent, const SparseVector& kept);

  // (a host copy when the residual lives on a GPU)
  const std::vector<float>& residual() const;
  float lastThreshold() const { return threshold_; }

private:
  bool thresholdDue() const;

  Device device_;
  std::unique_ptr<FlatBuffer> onDevice_;   // the residual on a GPU
  mutable std::vector<float> residual_;    // on the host (or the host copy of onDevice_)
  uint64_t seed_;
  TopkMethod method_;
  std::mt19937_64 rng_;
  int reuseEvery_;
  long calls_ = 0;
  float threshold_ = 0;
};

}  // namespace marian
