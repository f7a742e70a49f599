#pragma once
// defines: marian::median — the middle value of a sample, of an even one the mean of its two
// middle values (the slow-rank judge's round trips, marian-commbench's repetitions).
#include <algorithm>
#include <vector>

namespace marian {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace marian
