#include "comm/topk_selection.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "common/error.h"
#include "common/parallel.h"
#include "tensors/kernels.h"

namespace marian {

float exactThreshold(const float* x, size_t n, size_t k) {
  if(k == 0 || k >= n)
    return 0.f;
  std::vector<float> magnitude(n);
  for(size_t i = 0; i < n; ++i)
    magnitude[i] = std::fabs(x[i]);
  std::nth_element(magnitude.begin(), magnitude.begin() + long(k - 1), magnitude.end(), std::greater<float>());
  return magnitude[k - 1];
}

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
    uint64_t state = rng() | 1;  // xorshift: the draw must cost less than the read it picks
    for(size_t s = 0; s < samples; ++s) {  // stratum s is [s n / samples, (s+1) n / samples)
      size_t begin = s * n / samples, width = (s + 1) * n / samples - begin;
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      sample[s] = std::fabs(x[begin + size_t(((state >> 32) * uint64_t(width)) >> 32)]);
    }
  }
  size_t kth = std::min(sample.size() - 1, size_t(double(sample.size()) * keep));
  std::nth_element(sample.begin(), sample.begin() + long(kth), sample.end(), std::greater<float>());
  return sample[kth];
}

// Appends the entries of x[begin, end) with |x| >= threshold and x != 0 to out. With AVX2 (the
// x86-64-v3 build) eight magnitudes are compared at once and only the set bits of the mask are
// visited, so the scan runs at memory speed; otherwise one by one.
static void selectRange(const float* x, size_t begin, size_t end, float threshold, SparseVector& out) {
  auto take = [&](size_t i) {
    if(std::fabs(x[i]) >= threshold && x[i] != 0.f) {
      out.indices.push_back(uint32_t(i));
      out.values.push_back(x[i]);
    }
  };
  size_t i = begin;
#ifdef __AVX2__
  const __m256 signless = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 t = _mm256_set1_ps(threshold);
  const __m256 zero = _mm256_setzero_ps();
  for(; i + 8 <= end; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256 hit = _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(v, signless), t, _CMP_GE_OQ),
                               _mm256_cmp_ps(v, zero, _CMP_NEQ_OQ));
    for(unsigned mask = unsigned(_mm256_movemask_ps(hit)); mask; mask &= mask - 1) {
      size_t j = i + size_t(__builtin_ctz(mask));
      out.indices.push_back(uint32_t(j));
      out.values.push_back(x[j]);
    }
  }
#endif
  for(; i < end; ++i)
    take(i);
}

SparseVector selectAbove(const float* x, size_t n, float threshold) {
  ABORT_IF(n > size_t(UINT32_MAX), "Cannot index {} values with 32 bits", n);
  size_t threads = n < (size_t(1) << 20) ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<SparseVector> parts(threads);
  parallelFor(threads, [&](size_t t) { selectRange(x, n * t / threads, n * (t + 1) / threads, threshold, parts[t]); });
  SparseVector out = std::move(parts[0]);
  for(size_t t = 1; t < threads; ++t) {
    out.indices.insert(out.indices.end(), parts[t].indices.begin(), parts[t].indices.end());
    out.values.insert(out.values.end(), parts[t].values.begin(), parts[t].values.end());
  }
  return out;
}

TopkMethod parseTopkMethod(const std::string& name) {
  if(name == "exact")
    return TopkMethod::exact;
  if(name == "sampled")
    return TopkMethod::sampled;
  if(name == "reuse")
    return TopkMethod::reuse;
  ABORT("Unknown top-k selection '{}'; available: exact, sampled, reuse", name);
}

TopkSelector::TopkSelector(size_t n, TopkMethod method, uint64_t seed, int reuseEvery, Device device)
    : device_(device), seed_(seed), method_(method), rng_(seed), reuseEvery_(reuseEvery) {
  ABORT_IF(reuseEvery < 1, "Threshold reuse needs a period >= 1, not {}", reuseEvery);
  if(device.type == DeviceType::cpu)
    residual_.assign(n, 0.f);
  else
    onDevice_ = std::make_unique<FlatBuffer>(device, Type::float32, n);
}

bool TopkSelector::thresholdDue() const {
  return method_ == TopkMethod::exact || calls_ % reuseEvery_ == 0;
}

SparseVector TopkSelector::select(const float* x, size_t k) {
  ABORT_IF(onDevice_, "TopkSelector on {} was given host values", device_.toString());
  size_t n = residual_.size();
  float* r = residual_.data();
  for(size_t i = 0; i < n; ++i)
    r[i] += x[i];
  if(method_ == TopkMethod::sampled)
    threshold_ = sampledThreshold(r, n, double(k) / double(std::max<size_t>(n, 1)), rng_);
  else if(thresholdDue())
    threshold_ = exactThreshold(r, n, k);
  ++calls_;
  SparseVector sent = selectAbove(r, n, threshold_);
  for(uint32_t i : sent.indices)
    r[i] = 0.f;
  return sent;
}

SparseVector TopkSelector::select(Tensor x, size_t k) {
  if(!onDevice_) {
    ABORT_IF(x.device.type != DeviceType::cpu, "TopkSelector on the host was given {} values", x.device.toString());
    return select(x.f32(), k);
  }
  Tensor r = onDevice_->all();
  ABORT_IF(x.size() != r.size(), "TopkSelector of {} values was given {}", r.size(), x.size());
  kernels::add(r, x);
  if(method_ == TopkMethod::sampled)
    threshold_ = kernels::sampledThreshold(r, double(k) / double(std::max<size_t>(r.size(), 1)),
                                           seed_ * 1000003ull + uint64_t(calls_));
  else if(thresholdDue())
    threshold_ = kernels::exactThreshold(r, k);
  ++calls_;
  SparseVector sent;
  kernels::takeAbove(r, threshold_, sent.indices, sent.values);
  return sent;
}

void TopkSelector::restoreUnselected(const SparseVector& sent, const SparseVector& kept) {
  SparseVector back;
  size_t j = 0;
  for(size_t s = 0; s < sent.size(); ++s) {
    while(j < kept.size() && kept.indices[j] < sent.indices[s])
      ++j;
    if(j == kept.size() || kept.indices[j] != sent.indices[s]) {
      back.indices.push_back(sent.indices[s]);
      back.values.push_back(sent.values[s]);
    }
  }
  if(onDevice_)
    kernels::scatterAdd(onDevice_->all(), back.indices, back.values);
  else
    back.addTo(residual_.data());
}

const std::vector<float>& TopkSelector::residual() const {
  if(onDevice_)
    residual_ = kernels::toHost(onDevice_->all());
  return residual_;
}

}  // namespace marian
