#pragma once
// defines: top-k selection of a gradient with error feedback (seeds 000-002, 004) — TopkSelector
// keeps what it did not send as a residual that is added to the next gradient, and picks its
// threshold exactly (the k-th magnitude), sampled (Aji & Heafield: the threshold of a sample) or
// reused (Ok-Topk: an exact threshold recomputed every few calls and applied in between).
// Gradient dropping (the parameter server's clients) and compressed allreduce (sync-SGD) are
// both uses of it. With momentum m (DGC's momentum correction, Lin et al. 2018; Marian's
// --grad-dropping-momentum) what accumulates is a velocity u = m u + x rather than x, and an
// entry's velocity is cleared when it is sent (momentum factor masking). The residual lives on the selector's device (a GPU, or the host as the CPU
// device) and the thresholds and selection are the device's kernels, so from a GPU only the
// selected entries cross to the host.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/sparse_vector.h"
#include "tensors/arena.h"

namespace marian {

enum class TopkMethod { exact, sampled, reuse };
TopkMethod parseTopkMethod(const std::string& name);  // "exact", "sampled", "reuse"

class TopkSelector {
public:
  // reuseEvery: with TopkMethod::reuse, the exact threshold is recomputed every this many calls.
  TopkSelector(size_t n, TopkMethod method, uint64_t seed, int reuseEvery = 32, Device device = cpuDevice(),
               float momentum = 0.f);

  // Adds x (n values, on any device; with momentum, the updated velocity) into the residual and
  // takes out about k of its largest-magnitude entries, which it returns; sent + residual
  // afterwards == old residual + what was added, exactly (entries move, they are never rounded).
  SparseVector select(Tensor x, size_t k);
  // Puts the entries of `sent` whose index is not in `kept` back into the residual: what a global
  // top-k scheme did not select stays for later (seed 001 Alg. 4 line 10, seed 002 Alg. 2).
  void restoreUnselected(const SparseVector& sent, const SparseVector& kept);

  size_t size() const { return n_; }
  Device device() const { return device_; }
  float lastThreshold() const { return threshold_; }
  // The residual itself, on the selector's device (n values).
  Tensor residual() const { return residual_->all().slice(0, n_); }

  // What continues the selection exactly after a restart: the residual and the velocity (host
  // copies; no velocity without momentum), the number of calls (the sample positions and the
  // reuse period follow from it) and the reused threshold.
  struct State {
    std::vector<float> residual, velocity;
    uint64_t calls = 0;
    float threshold = 0;
  };
  State state() const;
  void setState(const State& state);

private:
  size_t n_;
  Device device_;
  std::unique_ptr<FlatBuffer> residual_, velocity_;
  float momentum_;
  uint64_t seed_;
  TopkMethod method_;
  int reuseEvery_;
  uint64_t calls_ = 0;
  float threshold_ = 0;
};

}  // namespace marian
