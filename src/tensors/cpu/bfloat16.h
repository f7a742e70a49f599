#pragma once
// defines: cpu::roundToBfloat16 — float32 to bfloat16 as AVX512-BF16's VCVTNEPS2BF16 rounds
// (to nearest, ties to even; denormal inputs to signed zero; NaN stays NaN), in hardware where
// the CPU has it; cpu::bfloat16ToFloat, exact; cpu::bfloat16Values, the two in one pass.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace marian {
namespace cpu {

inline uint16_t roundToBfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep it quiet and NaN
    return uint16_t((u >> 16) | 0x40);
  if((u & 0x7f800000u) == 0)  // zero or denormal
    return uint16_t((u >> 16) & 0x8000);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

inline float bfloat16ToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// dst[i] = roundToBfloat16(src[i]) for i < n, on the calling thread; dst may be src (in place)
void roundToBfloat16(uint16_t* dst, const float* src, size_t n);
// dst[i] = bfloat16ToFloat(roundToBfloat16(src[i])) for i < n: the bfloat16 values as float32
void bfloat16Values(float* dst, const float* src, size_t n);

}  // namespace cpu
}  // namespace marian
