#pragma once
// defines: marian::OneBitAllreduce — the compressed allreduce of 1-bit Adam (Tang et al., ICML
// 2021; DeepSpeed's compressed_allreduce): the mean over ranks of a dense vector sent as one sign
// bit a value plus a scale per segment, with error feedback on both sides (the worker and server
// steps of CompressedMeanAllreduce, compressed_mean.h). Scales go per segment: the vector is cut
// into segments (the caller's starts, e.g. every parameter tensor as DeepSpeed does, cut again into
// blocks: segments.h), and a chunk into the pieces of the segments inside it, so that a tensor of
// small values is not sent at the scale of a large one (one scale per chunk made 1-bit Adam need
// 1.16x dense's words on Multi30k). Segment s of x is sent as scale_s sign(x_s), scale_s = |x_s|_2
// / sqrt(size_s) (rms, DeepSpeed's) or |x_s|_1 / size_s (meanAbs) (a value >= 0 has sign +1).
// With units (setUnits: a positive value per entry, the same on every rank) value i is sent as
// units_i x (a sign and the segment's scale of x_i / units_i): the mean stays linear, and a segment
// whose values differ in size by their units (Adam's momentum over its frozen sqrt(v)) is sent at
// the precision of its update, not of its largest momenta. The errors stay in the values' units.
// meanAbs is the scale of least squares (Karimireddy et al., ICML 2019, EF-SignSGD): the error's
// norm (in units) is then at most x's whatever x is, |e|^2 = |x|^2 - |x|_1^2 / size; with rms it
// is 2 |x|^2 (1 - |x|_1 / (sqrt(size) |x|_2)), larger than |x|^2 when a few values dominate: a
// spike S sets its whole segment's scale (about S / sqrt(size)), far above its other values.
// About 2 (P-1)/P x (n/8 + 4 x segments) bytes sent per rank and call (a 32nd of a dense ring's
// plus the scales). GradientAllreducer uses it for 1-bit Adam's momentum (--onebit-adam).
#include <string>
#include <vector>

#include "comm/allreduce/compressed_mean.h"

namespace marian {

enum class OneBitScale { rms, meanAbs };
OneBitScale oneBitScaleFromName(const std::string& name);  // "rms", "mean-abs"; else an error

class OneBitAllreduce : public CompressedMeanAllreduce {
public:
  // segmentStarts: sorted, 0 first (a single segment by default).
  OneBitAllreduce(Transport& transport, size_t n, std::vector<size_t> segmentStarts = {0});
  std::string name() const override { return "onebit"; }

  // Every value's unit (n positive values, identical on every rank); empty: 1 each.
  void setUnits(std::vector<float> units);
  bool hasUnits() const { return !units_.empty(); }
  void setScale(OneBitScale scale) { scale_ = scale; }

  // One chunk of n values as it goes on the wire: a scale per segment (starts: where each begins,
  // 0 first; rms or meanAbs) of x / units (units null: 1), then a bit a value (1: negative), with
  // error[i] = x[i] - what it stands for; and back, added times weight into out.
  static std::vector<char> compress(const float* x, size_t n, const std::vector<size_t>& starts, float* error,
                                    const float* units = nullptr, OneBitScale scale = OneBitScale::rms);
  // The bytes of such a chunk: a scale a segment, a bit a value.
  static size_t encodedBytes(size_t n, size_t segments);
  static void decompress(const std::vector<char>& bytes, size_t n, const std::vector<size_t>& starts, float* out,
                         float weight, const float* units = nullptr);

protected:
  std::vector<char> encode(int j, const float* x, float* error) const override;
  void decode(int j, const std::vector<char>& bytes, float* out, float weight) const override;
  size_t encodedSize(int j) const override { return encodedBytes(chunk(j).size, chunkStarts_[size_t(j)].size()); }

private:
  std::vector<std::vector<size_t>> chunkStarts_;  // per chunk: its segments' starts, relative to it
  std::vector<float> units_;
  OneBitScale scale_ = OneBitScale::rms;
  const float* unitsAt(Range c) const { return units_.empty() ? nullptr : units_.data() + c.offset; }
};

}  // namespace marian
