#pragma once
// defines: marian::QuantizedAllreduce — the mean over ranks of a dense vector sent in 8, 4 or 2
// bits a value, with error feedback on both sides (the worker and server steps of
// CompressedMeanAllreduce, compressed_mean.h): each block of `block` values goes as one fp32
// scale and a code a value. 8 and 4 bits: the scale max |x| / L and a signed integer code,
// round(x / scale) in [-L, L], L = 127 or 7. 2 bits: four levels, +-0.4528 and +-1.5104 times the
// scale, split at 0.9816 times the block's root mean square (Lloyd-Max's for a normal
// distribution, Max 1960: about a third of 1 bit's squared error), the scale the least-squares fit
// to the chosen levels; a uniform code of 2 bits would have 3 levels, most values at 0.
// The errors keep what coding lost, so nothing is lost over the calls (INTELLECT-1 sends DiLoCo's
// pseudo-gradients in int8; Streaming DiLoCo in 4 bits, summed in fp32).
// About 2 (P-1)/P x (n bits/8 + 4 n/block) bytes sent per rank and call: 4x (8 bits), 8x (4 bits)
// and 15x (2 bits) fewer than a dense ring's. OuterRounds sends the pseudo-gradients with it
// (--outer-quantize-bits).
#include <string>
#include <vector>

#include "comm/allreduce/compressed_mean.h"

namespace marian {

class QuantizedAllreduce : public CompressedMeanAllreduce {
public:
  static constexpr size_t kBlock = 256;  // values per scale: 1/8 bit a value in scales
  // 2 bits: the levels' magnitudes in the scale, and where they split in the block's root mean square
  static constexpr float kTwoBitLevels[2] = {0.4528f, 1.5104f};
  static constexpr float kTwoBitSplit = 0.9816f;
  // A 2-bit code (its low bits: bit 0 the outer level, bit 1 negative) times the scale.
  static float twoBitValue(unsigned code, float scale) {
    return ((code & 2u) ? -scale : scale) * kTwoBitLevels[code & 1u];
  }
  // bits: 8, 4 or 2.
  QuantizedAllreduce(Transport& transport, size_t n, int bits, size_t block = kBlock);
  std::string name() const override { return "quantized"; }

  // n values as they go on the wire: a scale per block of `block`, then a code a value (8 bits:
  // one byte; 4 bits: two a byte, 2 bits: four, the first in the lowest bits), with error[i] =
  // x[i] - what it stands for; and back, added times weight into out.
  static std::vector<char> quantize(const float* x, size_t n, int bits, size_t block, float* error);
  static void dequantize(const std::vector<char>& bytes, size_t n, int bits, size_t block, float* out, float weight);
  static size_t encodedBytes(size_t n, int bits, size_t block);

protected:
  std::vector<char> encode(int j, const float* x, float* error) const override;
  void decode(int j, const std::vector<char>& bytes, float* out, float weight) const override;
  size_t encodedSize(int j) const override { return encodedBytes(chunk(j).size, bits_, block_); }

private:
  int bits_;
  size_t block_;
};

}  // namespace marian
