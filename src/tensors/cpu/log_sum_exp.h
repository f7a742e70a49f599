#pragma once
// defines: cpu::LogSumExp — max and log(sum(exp(x - max))) of a row, the stable base of softmax,
// log-softmax and cross-entropy: log p_j = (x_j - max) - logSum.
#include <cmath>
#include <cstddef>

#include "tensors/cpu/fast_exp.h"

namespace marian {
namespace cpu {

struct LogSumExp {
  float max, logSum;

  LogSumExp(const float* row, size_t n) {
    float mx = row[0];
#pragma omp simd reduction(max : mx)
    for(size_t j = 1; j < n; ++j)
      mx = std::max(mx, row[j]);
    max = mx;
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for(size_t j = 0; j < n; ++j)
      sum += fastExp(row[j] - mx);
    logSum = std::log(sum);
  }
  float logProb(float x) const { return (x - max) - logSum; }
};

}  // namespace cpu
}  // namespace marian
