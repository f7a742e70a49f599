#include "comm/allreduce/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace marian {

namespace {

int largestCode(int bits) { return (1 << (bits - 1)) - 1; }  // 127, 7: symmetric around 0
size_t blocksOf(size_t n, size_t block) { return (n + block - 1) / block; }

void checkBits(int bits) { ABORT_IF(bits != 8 && bits != 4 && bits != 2, "Quantization to {} bits: 8, 4 or 2", bits); }

// What value i's code stands for.
float decoded(const unsigned char* codes, size_t i, int bits, float scale) {
  if(bits == 2)
    return QuantizedAllreduce::twoBitValue(codes[i / 4] >> (2 * (i % 4)), scale);
  int code = bits == 8 ? int(static_cast<signed char>(codes[i])) : int((codes[i / 2] >> (4 * (i % 2))) & 15u) - 8;
  return float(code) * scale;
}

// One block in 8 or 4 bits: the scale its largest magnitude over L, codes rounded to the nearest.
float quantizeUniform(const float* x, size_t n, int bits, unsigned char* codes, size_t first, float* error) {
  const int L = largestCode(bits);
  float largest = 0.f;
  for(size_t i = 0; i < n; ++i)
    largest = std::max(largest, std::fabs(x[i]));
  float scale = largest / float(L);
  for(size_t i = 0; i < n; ++i) {
    int code = scale > 0.f ? int(std::round(x[i] / scale)) : 0;  // halves away from zero
    code = std::clamp(code, -L, L);
    error[i] = x[i] - float(code) * scale;
    size_t at = first + i;
    if(bits == 8)
      codes[at] = static_cast<unsigned char>(static_cast<signed char>(code));
    else  // offset by 8: 1..15
      codes[at / 2] |= static_cast<unsigned char>((code + 8) << (4 * (at % 2)));
  }
  return scale;
}

// One block in 2 bits: the levels split at kTwoBitSplit times its root mean square, then the
// scale that fits the chosen levels best (least squares: sum |x| l / sum l^2, never negative).
float quantizeTwoBits(const float* x, size_t n, unsigned char* codes, size_t first, float* error) {
  using Q = QuantizedAllreduce;
  double squares = 0.0;
  for(size_t i = 0; i < n; ++i)
    squares += double(x[i]) * double(x[i]);
  float split = Q::kTwoBitSplit * float(std::sqrt(squares / double(n)));
  double along = 0.0, levelSquares = 0.0;
  for(size_t i = 0; i < n; ++i) {
    unsigned outer = std::fabs(x[i]) < split ? 0u : 1u;
    double level = Q::kTwoBitLevels[outer];
    along += double(std::fabs(x[i])) * level;
    levelSquares += level * level;
    size_t at = first + i;
    codes[at / 4] |= static_cast<unsigned char>(((x[i] < 0.f ? 2u : 0u) | outer) << (2 * (at % 4)));
  }
  float scale = squares > 0.0 ? float(along / levelSquares) : 0.f;
  for(size_t i = 0; i < n; ++i)
    error[i] = x[i] - decoded(codes, first + i, 2, scale);
  return scale;
}

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
  size_t header = blocksOf(n, block) * sizeof(float);
  std::vector<char> bytes(encodedBytes(n, bits, block), 0);
  auto* codes = reinterpret_cast<unsigned char*>(bytes.data() + header);
  for(size_t b = 0; b * block < n; ++b) {
    size_t begin = b * block, end = std::min(n, begin + block);
    for(size_t i = begin; i < end; ++i)
      ABORT_IF(!std::isfinite(x[i]), "Quantizing a value that is not finite ({}) at {}", x[i], i);
    float scale = bits == 2 ? quantizeTwoBits(x + begin, end - begin, codes, begin, error + begin)
                            : quantizeUniform(x + begin, end - begin, bits, codes, begin, error + begin);
    std::memcpy(bytes.data() + b * sizeof(float), &scale, sizeof(float));
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
    for(size_t i = begin; i < end; ++i)
      out[i] += weight * decoded(codes, i, bits, scale);
  }
}

std::vector<char> QuantizedAllreduce::encode(int j, const float* x, float* error) const {
  return quantize(x, chunk(j).size, bits_, block_, error);
}

void QuantizedAllreduce::decode(int j, const std::vector<char>& bytes, float* out, float weight) const {
  dequantize(bytes, chunk(j).size, bits_, block_, out, weight);
}

}  // namespace marian
