// Gradient dropping on a device tensor (the reference for the GPU version): a sampled magnitude
// threshold, moving the entries above it out of a residual, and sparse scatter/gather.
#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "common/equal_split.h"
#include "common/parallel.h"

#include "tensors/counter_hash.h"
#include "tensors/kernel_checks.h"
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

// Moves the entries of r[begin, end) with |r| >= threshold and r != 0 to out. With AVX2 (the
// x86-64-v3 build) eight magnitudes are compared at once and only the set bits of the mask are
// visited, so the scan runs at memory speed.
static void takeRange(float* r, size_t begin, size_t end, float threshold, std::vector<uint32_t>& indices,
                      std::vector<float>& values) {
  auto take = [&](size_t i) {
    indices.push_back(uint32_t(i));
    values.push_back(r[i]);
    r[i] = 0.f;
  };
  size_t i = begin;
#ifdef __AVX2__
  const __m256 signless = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 t = _mm256_set1_ps(threshold);
  const __m256 zero = _mm256_setzero_ps();
  for(; i + 8 <= end; i += 8) {
    __m256 v = _mm256_loadu_ps(r + i);
    __m256 hit = _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(v, signless), t, _CMP_GE_OQ),
                               _mm256_cmp_ps(v, zero, _CMP_NEQ_OQ));
    for(unsigned mask = unsigned(_mm256_movemask_ps(hit)); mask; mask &= mask - 1)
      take(i + size_t(__builtin_ctz(mask)));
  }
#endif
  for(; i < end; ++i)
    if(std::fabs(r[i]) >= threshold && r[i] != 0.f)
      take(i);
}

void takeAbove(Tensor residual, float threshold, std::vector<uint32_t>& indices,
               std::vector<float>& values) {
  size_t n = residual.size();
  checks::indexableWith32Bits(n);
  // large ranges are scanned by several threads, each into its own part, joined in order
  size_t threads = n < (size_t(1) << 20) ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::vector<uint32_t>> partIndices(threads);
  std::vector<std::vector<float>> partValues(threads);
  parallelFor(threads, [&](size_t t) {
    Range part = equalPart(n, t, threads);
    takeRange(residual.f32(), part.offset, part.end(), threshold, partIndices[t], partValues[t]);
  });
  indices = std::move(partIndices[0]);
  values = std::move(partValues[0]);
  for(size_t t = 1; t < threads; ++t) {
    indices.insert(indices.end(), partIndices[t].begin(), partIndices[t].end());
    values.insert(values.end(), partValues[t].begin(), partValues[t].end());
  }
}

void scatterAdd(Tensor dense, const uint32_t* indices, const float* values, size_t k) {
  float* d = dense.f32();
  for(size_t j = 0; j < k; ++j) {
    ABORT_IF(indices[j] >= dense.size(), "scatterAdd: index {} out of range for {} values",
             indices[j], dense.size());
    d[indices[j]] += values[j];
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
