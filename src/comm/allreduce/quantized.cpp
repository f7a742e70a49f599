#include "comm/allreduce/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace marian {

namespace {

int largestCode(int bits) { return (1 << (bits - 1)) - 1; }  // 127, 7: symmetric around 0
size_t blocksOf(size_t n, size_t block) { return (n + block - 1) / block; }

void checkBits(int bits) { ABORT_IF(bits != 8 && bits != 4, "Quantization to {} bits: 8 or 4", bits); }

}  // namespace

QuantizedAllreduce::QuantizedAllreduce(Transport& transport, size_t n, int bits, size_t block)
    : CompressedMeanAllreduce(transport, n), bits_(bits), block_(block) {
  checkBits(bits);
  ABORT_IF(block == 0, "Quantization blocks of 0 values");
}

size_t QuantizedAllreduce::encodedBytes(size_t n, int bits, size_t block) {
  return blocksOf(n, block) * sizeof(float) + (n * size_t(bits) + 7) / 8;
}

std::vector<char> QuantizedAllreduce::quantize(const float* x, size_t n, int bits, size_t block, float* error) {
  checkBits(bits);
  const int L = largestCode(bits);
  size_t header = blocksOf(n, block) * sizeof(float);
  std::vector<char> bytes(encodedBytes(n, bits, block), 0);
  auto* codes = reinterpret_cast<unsigned char*>(bytes.data() + header);
  for(size_t b = 0; b * block < n; ++b) {
    size_t begin = b * block, end = std::min(n, begin + block);
    float largest = 0.f;
    for(size_t i = begin; i < end; ++i) {
      ABORT_IF(!std::isfinite(x[i]), "Quantizing a value that is not finite ({}) at {}", x[i], i);
      largest = std::max(largest, std::fabs(x[i]));
    }
    float scale = largest / float(L);
    std::memcpy(bytes.data() + b * sizeof(float), &scale, sizeof(float));
    for(size_t i = begin; i < end; ++i) {
      int code = scale > 0.f ? int(std::round(x[i] / scale)) : 0;  // halves away from zero
      code = std::clamp(code, -L, L);
      error[i] = x[i] - float(code) * scale;
      if(bits == 8)
        codes[i] = static_cast<unsigned char>(static_cast<signed char>(code));
      else  // offset by 8: 1..15
        codes[i / 2] |= static_cast<unsigned char>((code + 8) << (4 * (i % 2)));
    }
  }
  return bytes;
}

void QuantizedAllreduce::dequantize(const std::vector<char>& bytes, size_t n, int bits, size_t block, float* out,
                                    float weight) {
  checkBits(bits);
  ABORT_IF(bytes.size() != encodedBytes(n, bits, block), "{}-bit chunk of {} bytes for {} values", bits, bytes.size(),
           n);
  size_t header = blocksOf(n, block) * sizeof(float);
  const auto* codes = reinterpret_cast<const unsigned char*>(bytes.data() + header);
  for(size_t b = 0; b * block < n; ++b) {
    size_t begin = b * block, end = std::min(n, begin + block);
    float scale;
    std::memcpy(&scale, bytes.data() + b * sizeof(float), sizeof(float));
    ABORT_IF(!std::isfinite(scale) || scale < 0.f, "{}-bit chunk with the scale {}", bits, scale);
    for(size_t i = begin; i < end; ++i) {
      int code = bits == 8 ? int(static_cast<signed char>(codes[i])) : int((codes[i / 2] >> (4 * (i % 2))) & 15u) - 8;
      out[i] += weight * (float(code) * scale);
    }
  }
}

std::vector<char> QuantizedAllreduce::encode(int j, const float* x, float* error) const {
  return quantize(x, chunk(j).size, bits_, block_, error);
}

void QuantizedAllreduce::decode(int j, const std::vector<char>& bytes, float* out, float weight) const {
  dequantize(bytes, chunk(j).size, bits_, block_, out, weight);
}

}  // namespace marian
