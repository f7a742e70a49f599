#include "comm/dropper.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace marian {

float sampledThreshold(const float* x, size_t n, double keep, std::mt19937_64& rng) {
  if(n == 0 || keep >= 1.0)
    return 0.f;
  size_t samples = std::max<size_t>(1000, n / 100);
  std::vector<float> sample;
  if(samples >= n) {
    sample.resize(n);
    for(size_t i = 0; i < n; ++i)
      sample[i] = std::fabs(x[i]);
  } else {
    sample.resize(samples);
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    for(float& s : sample)
      s = std::fabs(x[pick(rng)]);
  }
  size_t kth = size_t(double(sample.size()) * keep);
  kth = std::min(sample.size() - 1, kth);
  // the kth largest of the sample
  std::nth_element(sample.begin(), sample.begin() + kth, sample.end(), std::greater<float>());
  return sample[kth];
}

SparseVector selectAbove(const float* x, size_t n, float threshold) {
  SparseVector out;
  for(size_t i = 0; i < n; ++i)
    if(std::fabs(x[i]) >= threshold && x[i] != 0.f) {
      out.indices.push_back(uint32_t(i));
      out.values.push_back(x[i]);
    }
  return out;
}

SparseVector GradientDropper::drop(const float* grads, size_t offset, size_t n, double keep) {
  ABORT_IF(offset + n > residual_.size(), "Dropping [{}, {}) of a range of {}", offset, offset + n,
           residual_.size());
  float* r = residual_.data() + offset;
  for(size_t i = 0; i < n; ++i)
    r[i] += grads[i];
  float t = sampledThreshold(r, n, keep, rng_);
  SparseVector sent = selectAbove(r, n, t);
  for(uint32_t i : sent.indices)
    r[i] = 0.f;
  return sent;
}

}  // namespace marian
