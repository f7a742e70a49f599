#pragma once
// defines: marian::firstNotFinite — where a float array first holds a NaN or an infinity. A
// diverged update leaves them in the parameters and shows only at the next cost: the saves,
// validations and model readers that must not pass them on ask this.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "common/format.h"

namespace marian {

// "" when values[0, n) are all finite, else "'NAME' holds VALUE at index I" for the first that is not.
inline std::string firstNotFinite(const float* values, size_t n, const std::string& name) {
  // x * 0 is 0 for every finite x and NaN otherwise: one pass that vectorises, the search only
  // on failure
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for(size_t i = 0; i < n; ++i)
    sum += values[i] * 0.f;
  if(sum == 0.f)
    return "";
  for(size_t i = 0; i < n; ++i)
    if(!std::isfinite(values[i]))
      return format("'{}' holds {} at index {}", name, values[i], i);
  return "";
}

inline std::string firstNotFinite(const std::vector<float>& values, const std::string& name) {
  return firstNotFinite(values.data(), values.size(), name);
}

}  // namespace marian
