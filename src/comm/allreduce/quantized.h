#pragma once
// defines: marian::QuantizedAllreduce — the mean over ranks of a dense vector sent in 8 or 4 bits
// a value, with error feedback on both sides (the worker and server steps of
// CompressedMeanAllreduce, compressed_mean.h): each block of `block` values goes as one fp32
// scale, max |x| / L, and a signed integer code a value, round(x / scale) in [-L, L], L = 127 (8
// bits) or 7 (4 bits). The errors keep what rounding lost, so nothing is lost over the calls
// (INTELLECT-1 sends DiLoCo's pseudo-gradients in int8; Streaming DiLoCo in 4 bits, summed in fp32).
// About 2 (P-1)/P x (n bits/8 + 4 n/block) bytes sent per rank and call: 4x (8 bits) and 8x
// (4 bits) fewer than a dense ring's. OuterRounds sends the pseudo-gradients with it
// (--outer-quantize-bits).
#include <string>
#include <vector>

#include "comm/allreduce/compressed_mean.h"

namespace marian {

class QuantizedAllreduce : public CompressedMeanAllreduce {
public:
  static constexpr size_t kBlock = 256;  // values per scale: 1/8 bit a value in scales
  // bits: 8 or 4.
  QuantizedAllreduce(Transport& transport, size_t n, int bits, size_t block = kBlock);
  std::string name() const override { return "quantized"; }

  // n values as they go on the wire: a scale per block of `block`, then a code a value (8 bits:
  // one byte; 4 bits: two a byte, the first in the low half), with error[i] = x[i] - what it
  // stands for; and back, added times weight into out.
  static std::vector<char> quantize(const float* x, size_t n, int bits, size_t block, float* error);
  static void dequantize(const std::vector<char>& bytes, size_t n, int bits, size_t block, float* out, float weight);
  static size_t encodedBytes(size_t n, int bits, size_t block);

protected:
  std::vector<char> encode(int j, const float* x, float* error) const override;
  void decode(int j, const std::vector<char>& bytes, float* out, float weight) const override;

private:
  int bits_;
  size_t block_;
};

}  // namespace marian
