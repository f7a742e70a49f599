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
// Loads and stores through intrinsics (types that may alias), the last block masked. In place
// (dst == src) is safe in ascending order: a block is loaded before it is stored, and the store
// of values [i, i + 16) covers bytes [2i, 2i + 32), below the next load's 4i + 64.
__attribute__((target("avx512f,avx512bw,avx512bf16,avx512vl"))) void roundToBfloat16Avx512(uint16_t* dst,
                                                                                            const float* src, size_t n) {
  for(size_t i = 0; i < n; i += 16) {
    __mmask16 lanes = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    __m256bh r = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes, src + i));
    _mm256_mask_storeu_epi16(dst + i, lanes, (__m256i)r);
  }
}

__attribute__((target("avx512f,avx512bw,avx512bf16,avx512vl"))) void bfloat16ValuesAvx512(float* dst, const float* src,
                                                                                          size_t n) {
  for(size_t i = 0; i < n; i += 16) {
    __mmask16 lanes = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    __m256bh r = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes, src + i));
    // the masked forms: GCC 12 warns of the unmasked ones' undefined source
    __m512i widened = _mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, (__m256i)r), 16);
    _mm512_mask_storeu_ps(dst + i, lanes, _mm512_castsi512_ps(widened));
  }
}

bool hardwareRounding() { return cpuFeatures().avx512Bf16 && cpuFeatures().avx512; }

// One row at a time, on this thread: each row added into the sums (in row order, as add()'s
// broadcast sum, so the same sums to the bit) while the cache still holds it for the rounding.
// In place, row r's bfloat16 values land below its float32 ones (r > 0) or over them in ascending
// blocks (r = 0, roundToBfloat16's in-place case).
void convertAddingRows(Tensor dst, Tensor src, Tensor addRows) {
  ABORT_IF(src.type != Type::float32 || dst.type != Type::bfloat16 || addRows.type != Type::float32 ||
               addRows.size() != size_t(src.shape.back()),
           "convert: rows of {} ({}) added into {} while rounded into {}", src.shape.toString(), typeName(src.type),
           addRows.shape.toString(), typeName(dst.type));
  size_t n = addRows.size(), rows = n ? src.size() / n : 0;
  float* __restrict sums = addRows.f32();
  const float* s = src.f32();
  uint16_t* d = dst.bf16();
  for(size_t r = 0; r < rows; ++r) {
    const float* row = s + r * n;  // (not restrict: row 0 is rounded into its own memory)
    for(size_t j = 0; j < n; ++j)
      sums[j] += row[j];
    roundToBfloat16(d + r * n, row, n);
  }
}
}  // namespace

void bfloat16Values(float* dst, const float* src, size_t n) {
  if(hardwareRounding())
    return bfloat16ValuesAvx512(dst, src, n);
  for(size_t i = 0; i < n; ++i)
    dst[i] = bfloat16ToFloat(roundToBfloat16(src[i]));
}

void roundToBfloat16(uint16_t* dst, const float* src, size_t n) {
  if(hardwareRounding())
    return roundToBfloat16Avx512(dst, src, n);
  // through blocks on the stack, so that dst may be src's own memory (rounding in place): block b
  // writes bytes [2b, 2b + 2m) after reading [4b, 4b + 4m), below what later blocks read
  constexpr size_t kBlock = 512;
  float in[kBlock];
  uint16_t out[kBlock];
  for(size_t b = 0; b < n; b += kBlock) {
    size_t m = std::min(kBlock, n - b);
    std::memcpy(in, src + b, m * sizeof(float));
    for(size_t i = 0; i < m; ++i)
      out[i] = roundToBfloat16(in[i]);
    std::memcpy(dst + b, out, m * sizeof(uint16_t));
  }
}

void convert(Tensor dst, Tensor src, Tensor addRows) {
  ABORT_IF(dst.size() != src.size(), "convert: {} values into {}", src.size(), dst.size());
  if(!addRows.empty())
    return convertAddingRows(dst, src, addRows);
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
