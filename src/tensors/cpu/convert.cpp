// Element type conversion between float32 and bfloat16 tensors.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "tensors/cpu/bfloat16.h"
#include "tensors/cpu/cpu_features.h"
#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"

namespace marian {
namespace cpu {

namespace {
__attribute__((target("avx512f,avx512bf16,avx512vl"))) void roundToBfloat16Avx512(uint16_t* dst, const float* src,
                                                                                   size_t n) {
  size_t i = 0;
  for(; i + 16 <= n; i += 16) {
    __m256bh r = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), reinterpret_cast<__m256i&>(r));
  }
  for(; i < n; ++i)
    dst[i] = roundToBfloat16(src[i]);
}
}  // namespace

void roundToBfloat16(uint16_t* dst, const float* src, size_t n) {
  // through blocks on the stack, so that dst may be src's own memory (rounding in place): block b
  // writes bytes [2b, 2b + 2m) after reading [4b, 4b + 4m), below what later blocks read
  constexpr size_t kBlock = 512;
  float in[kBlock];
  uint16_t out[kBlock];
  bool hardware = cpuFeatures().avx512Bf16;
  for(size_t b = 0; b < n; b += kBlock) {
    size_t m = std::min(kBlock, n - b);
    std::memcpy(in, src + b, m * sizeof(float));
    if(hardware)
      roundToBfloat16Avx512(out, in, m);
    else
      for(size_t i = 0; i < m; ++i)
        out[i] = roundToBfloat16(in[i]);
    std::memcpy(dst + b, out, m * sizeof(uint16_t));
  }
}

void convert(Tensor dst, Tensor src) {
  ABORT_IF(dst.size() != src.size(), "convert: {} values into {}", src.size(), dst.size());
  if(dst.type == src.type) {
    std::memcpy(dst.data, src.data, src.bytes());
    return;
  }
  if(src.type == Type::float32 && dst.type == Type::bfloat16) {
    uint16_t* d = dst.bf16();
    const float* s = src.f32();
    if(dst.data == src.data)  // in place: in order on one thread, each part read before it is written
      return roundToBfloat16(d, s, src.size());
    return parallelRanges(src.size(), kParallelElements, [&](size_t b, size_t e) { roundToBfloat16(d + b, s + b, e - b); });
  }
  if(src.type == Type::bfloat16 && dst.type == Type::float32) {
    float* d = dst.f32();
    const uint16_t* s = src.bf16();
    return parallelRanges(src.size(), kParallelElements, [&](size_t b, size_t e) {
      for(size_t i = b; i < e; ++i)
        d[i] = bfloat16ToFloat(s[i]);
    });
  }
  ABORT("convert: {} to {} is not supported", typeName(src.type), typeName(dst.type));
}

}  // namespace cpu
}  // namespace marian
