#pragma once
// defines: cpu::LogSumExp — max and log(sum(exp(x - max))) of a row, the stable base of softmax,
// log-softmax and cross-entropy: log p_j = (x_j - max) - logSum.
#include <cmath>
#include <cstddef>

namespace marian {
namespace cpu {

struct LogSumExp {
  float max, logSum;

  LogSumExp(const float* row, size_t n) {
    max = row[0];
    for(size_t j = 1; j < n; ++j)
      max = std::max(max, row[j]);
    float sum = 0.f;
    for(size_t j = 0; j < n; ++j)
      sum += std::exp(row[j] - max);
    logSum = std::log(sum);
  }
  float logProb(float x) const { return (x - max) - logSum; }
};

}  // namespace cpu
}  // namespace marian
