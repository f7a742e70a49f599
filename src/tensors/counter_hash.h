#pragma once
// defines: counterHash — a 32-bit hash of (seed, index) that CPU and GPU kernels compute alike,
// so random masks and samples are the same on every device, thread count and re-run.
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define COUNTER_HASH_FN __host__ __device__ inline
#else
#define COUNTER_HASH_FN inline
#endif

namespace marian {

// murmur3's finaliser
COUNTER_HASH_FN uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// The per-call base from a 64-bit seed; element i then draws mix32(base + i * golden).
COUNTER_HASH_FN uint32_t hashBase(uint64_t seed) {
  return mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) + 0x9e3779b9u));
}
COUNTER_HASH_FN uint32_t counterHash(uint32_t base, uint64_t i) {
  return mix32(base + uint32_t(i) * 0x9e3779b9u);
}

// The uint32 below which a draw keeps an element with probability `keep`.
COUNTER_HASH_FN uint32_t keepThreshold(float keep) {
  double t = double(keep) * 4294967296.0;
  return uint32_t(t > 4294967295.0 ? 4294967295.0 : t);
}

// Dropout's mask, the same on every device: 1/keep where the draw of (seed, i) falls below keep's
// threshold, else 0 (bernoulliMask stores it, dropoutMultiply draws it again when used).
struct DropoutMask {
  uint32_t base, threshold;
  float scale;
  bool all;  // keep == 1
  COUNTER_HASH_FN DropoutMask(float keep, uint64_t seed)
      : base(hashBase(seed)), threshold(keepThreshold(keep)), scale(1.f / keep), all(keep == 1.f) {}
  COUNTER_HASH_FN float at(uint64_t i) const { return counterHash(base, i) < threshold || all ? scale : 0.f; }
  // y + x_i times the mask in one fused multiply-add on every device, whatever the compilers
  // contract, so that CPU and GPU give the same bits.
  COUNTER_HASH_FN float addTo(float y, float x, uint64_t i) const { return fmaf(x, at(i), y); }
};

// Strata for sampled thresholds: max(1000, n/100) strata (all n when n is smaller), position
// in stratum s drawn from the hash.
inline uint64_t sampleCount(uint64_t n) { return n / 100 > 1000 ? n / 100 : (n < 1000 ? n : 1000); }
COUNTER_HASH_FN uint64_t samplePosition(uint32_t base, uint64_t s, uint64_t samples, uint64_t n) {
  uint64_t begin = s * n / samples, width = (s + 1) * n / samples - begin;
  return begin + ((uint64_t(counterHash(base, s)) * width) >> 32);
}

}  // namespace marian
