#include "comm/allreduce/onebit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "comm/allreduce/segments.h"
#include "common/error.h"

namespace marian {

OneBitAllreduce::OneBitAllreduce(Transport& transport, size_t n, std::vector<size_t> segmentStarts)
    : CompressedMeanAllreduce(transport, n) {
  ABORT_IF(segmentStarts.empty() || segmentStarts[0] != 0 || !std::is_sorted(segmentStarts.begin(), segmentStarts.end()),
           "1-bit segments must start at 0 and be sorted");
  for(int j = 0; j < transport.size(); ++j)
    chunkStarts_.push_back(segmentsIn(chunk(j), segmentStarts));
}

OneBitScale oneBitScaleFromName(const std::string& name) {
  if(name == "rms")
    return OneBitScale::rms;
  if(name == "mean-abs")
    return OneBitScale::meanAbs;
  ABORT("Unknown 1-bit scale '{}' (--onebit-scale); available: rms, mean-abs", name);
}

void OneBitAllreduce::setUnits(std::vector<float> units) {
  ABORT_IF(!units.empty() && units.size() != n_, "1-bit units of {} values for a vector of {}", units.size(), n_);
  for(float u : units)
    ABORT_IF(!(u > 0.f) || !std::isfinite(u), "1-bit unit {}: units must be positive and finite", u);
  units_ = std::move(units);
}

size_t OneBitAllreduce::encodedBytes(size_t n, size_t segments) { return segments * sizeof(float) + (n + 7) / 8; }

namespace {

// The 8 values of each byte's bits, 1: -1.f, 0: 1.f (bit t is value t of the byte's 8).
struct SignTable {
  float of[256][8];
  SignTable() {
    for(unsigned b = 0; b < 256; ++b)
      for(unsigned t = 0; t < 8; ++t)
        of[b][t] = (b >> t) & 1u ? -1.f : 1.f;
  }
};
const SignTable kSigns;

}  // namespace

std::vector<char> OneBitAllreduce::compress(const float* x, size_t n, const std::vector<size_t>& starts,
                                            float* error, const float* units, OneBitScale scale) {
  size_t header = starts.size() * sizeof(float);
  std::vector<char> bytes(encodedBytes(n, starts.size()), 0);
  auto* bits = reinterpret_cast<unsigned char*>(bytes.data() + header);
  for(size_t s = 0; s < starts.size(); ++s) {
    size_t begin = starts[s], end = s + 1 < starts.size() ? starts[s + 1] : n;
    double sum = 0;  // of squares (rms) or of magnitudes (meanAbs), in units
    for(size_t i = begin; i < end; ++i) {
      double inUnits = units ? double(x[i]) / double(units[i]) : double(x[i]);
      sum += scale == OneBitScale::rms ? inUnits * inUnits : std::fabs(inUnits);
    }
    double mean = end > begin ? sum / double(end - begin) : 0.0;
    float segmentScale = float(scale == OneBitScale::rms ? std::sqrt(mean) : mean);
    std::memcpy(bytes.data() + s * sizeof(float), &segmentScale, sizeof(float));
    // what each value stands for, +-scale (times its unit): branch-free loops the compiler vectorises
    if(units)
      for(size_t i = begin; i < end; ++i) {
        float sent = segmentScale * units[i];
        error[i] = x[i] - (x[i] < 0.f ? -sent : sent);
      }
    else
      for(size_t i = begin; i < end; ++i)
        error[i] = x[i] - (x[i] < 0.f ? -segmentScale : segmentScale);
  }
  // a bit a value (1: negative), whatever its segment
  size_t whole = n / 8;
  for(size_t k = 0; k < whole; ++k) {
    unsigned b = 0;
    for(unsigned t = 0; t < 8; ++t)
      b |= unsigned(x[8 * k + t] < 0.f) << t;
    bits[k] = static_cast<unsigned char>(b);
  }
  for(size_t i = whole * 8; i < n; ++i)
    if(x[i] < 0.f)
      bits[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
  return bytes;
}

void OneBitAllreduce::decompress(const std::vector<char>& bytes, size_t n, const std::vector<size_t>& starts,
                                 float* out, float weight, const float* units) {
  size_t header = starts.size() * sizeof(float);
  ABORT_IF(bytes.size() != encodedBytes(n, starts.size()), "1-bit chunk of {} bytes for {} values in {} segments",
           bytes.size(), n, starts.size());
  const auto* bits = reinterpret_cast<const unsigned char*>(bytes.data() + header);
  // every value's sign, +-1 (scratch kept by the thread: a chunk's size allocated anew at every
  // call faults its pages in again)
  thread_local std::vector<float> signs;
  signs.resize((n + 7) / 8 * 8);
  for(size_t k = 0; k < (n + 7) / 8; ++k)
    std::memcpy(signs.data() + 8 * k, kSigns.of[bits[k]], 8 * sizeof(float));
  for(size_t s = 0; s < starts.size(); ++s) {
    size_t begin = starts[s], end = s + 1 < starts.size() ? starts[s + 1] : n;
    float scale;
    std::memcpy(&scale, bytes.data() + s * sizeof(float), sizeof(float));
    ABORT_IF(!std::isfinite(scale) || scale < 0.f, "1-bit chunk with the scale {}", scale);
    // +-sent is the sign times sent to the bit
    if(units)
      for(size_t i = begin; i < end; ++i)
        out[i] += weight * (signs[i] * (scale * units[i]));
    else
      for(size_t i = begin; i < end; ++i)
        out[i] += weight * (signs[i] * scale);
  }
}

std::vector<char> OneBitAllreduce::encode(int j, const float* x, float* error) const {
  Range c = chunk(j);
  return compress(x, c.size, chunkStarts_[size_t(j)], error, unitsAt(c), scale_);
}

void OneBitAllreduce::decode(int j, const std::vector<char>& bytes, float* out, float weight) const {
  Range c = chunk(j);
  decompress(bytes, c.size, chunkStarts_[size_t(j)], out, weight, unitsAt(c));
}

}  // namespace marian
