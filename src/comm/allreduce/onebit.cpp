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
    for(size_t i = begin; i < end; ++i) {
      bool negative = x[i] < 0.f;
      if(negative)
        bits[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
      float sent = units ? segmentScale * units[i] : segmentScale;
      error[i] = x[i] - (negative ? -sent : sent);
    }
  }
  return bytes;
}

void OneBitAllreduce::decompress(const std::vector<char>& bytes, size_t n, const std::vector<size_t>& starts,
                                 float* out, float weight, const float* units) {
  size_t header = starts.size() * sizeof(float);
  ABORT_IF(bytes.size() != encodedBytes(n, starts.size()), "1-bit chunk of {} bytes for {} values in {} segments",
           bytes.size(), n, starts.size());
  const auto* bits = reinterpret_cast<const unsigned char*>(bytes.data() + header);
  for(size_t s = 0; s < starts.size(); ++s) {
    size_t begin = starts[s], end = s + 1 < starts.size() ? starts[s + 1] : n;
    float scale;
    std::memcpy(&scale, bytes.data() + s * sizeof(float), sizeof(float));
    ABORT_IF(!std::isfinite(scale) || scale < 0.f, "1-bit chunk with the scale {}", scale);
    for(size_t i = begin; i < end; ++i) {
      float sent = units ? scale * units[i] : scale;
      out[i] += weight * ((bits[i / 8] >> (i % 8)) & 1u ? -sent : sent);
    }
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
