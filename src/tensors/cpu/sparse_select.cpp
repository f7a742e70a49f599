// Gradient dropping on a device tensor (the reference for the GPU version): a sampled magnitude
// threshold, moving the entries above it out of a residual, and sparse scatter/gather.
#include <algorithm>
#include <cmath>
#include <functional>

#include "tensors/counter_hash.h"
#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace cpu {

float sampledThreshold(Tensor x, double keep, uint64_t seed) {
  size_t n = x.size();
  if(n == 0 || keep >= 1.0)
    return 0.f;
  const float* v = x.f32();
  size_t samples = sampleCount(n);
  uint32_t base = hashBase(seed);
  std::vector<float> sample(samples);
  for(size_t s = 0; s < samples; ++s)
    sample[s] = std::fabs(v[samples == n ? s : samplePosition(base, s, samples, n)]);
  size_t kth = std::min(samples - 1, size_t(double(samples) * keep));
  std::nth_element(sample.begin(), sample.begin() + long(kth), sample.end(), std::greater<float>());
  return sample[kth];
}

float exactThreshold(Tensor x, size_t k) {
  size_t n = x.size();
  if(k == 0 || k >= n)
    return 0.f;
  std::vector<float> magnitude(n);
  for(size_t i = 0; i < n; ++i)
    magnitude[i] = std::fabs(x.f32()[i]);
  std::nth_element(magnitude.begin(), magnitude.begin() + long(k - 1), magnitude.end(), std::greater<float>());
  return magnitude[k - 1];
}

void takeAbove(Tensor residual, float threshold, std::vector<uint32_t>& indices,
               std::vector<float>& values) {
  float* r = residual.f32();
  indices.clear();
  values.clear();
  for(size_t i = 0, n = residual.size(); i < n; ++i) {
    if(std::fabs(r[i]) >= threshold && r[i] != 0.f) {
      indices.push_back(uint32_t(i));
      values.push_back(r[i]);
      r[i] = 0.f;
    }
  }
}

void scatterAdd(Tensor dense, const std::vector<uint32_t>& indices, const std::vector<float>& values) {
  float* d = dense.f32();
  for(size_t k = 0; k < indices.size(); ++k) {
    ABORT_IF(indices[k] >= dense.size(), "scatterAdd: index {} out of range for {} values",
             indices[k], dense.size());
    d[indices[k]] += values[k];
  }
}

void gatherAt(std::vector<float>& values, Tensor dense, const std::vector<uint32_t>& indices) {
  const float* d = dense.f32();
  values.resize(indices.size());
  for(size_t k = 0; k < indices.size(); ++k) {
    ABORT_IF(indices[k] >= dense.size(), "gatherAt: index {} out of range for {} values",
             indices[k], dense.size());
    values[k] = d[indices[k]];
  }
}

}  // namespace cpu
}  // namespace marian
