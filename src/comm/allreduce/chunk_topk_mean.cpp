#include "comm/allreduce/chunk_topk_mean.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "comm/message_tags.h"
#include "common/error.h"

namespace marian {

namespace {

class BitWriter {
public:
  explicit BitWriter(unsigned char* out) : out_(out) {}
  void put(uint32_t value, int bits) {
    for(int b = 0; b < bits; ++b, ++at_)
      if((value >> b) & 1u)
        out_[at_ / 8] |= static_cast<unsigned char>(1u << (at_ % 8));
  }

private:
  unsigned char* out_;
  size_t at_ = 0;
};

class BitReader {
public:
  explicit BitReader(const unsigned char* in) : in_(in) {}
  uint32_t get(int bits) {
    uint32_t v = 0;
    for(int b = 0; b < bits; ++b, ++at_)
      v |= uint32_t((in_[at_ / 8] >> (at_ % 8)) & 1u) << b;
    return v;
  }

private:
  const unsigned char* in_;
  size_t at_ = 0;
};

struct Chunk {
  size_t begin, size;
};
std::vector<Chunk> chunksOf(size_t n, const std::vector<size_t>& starts) {
  std::vector<Chunk> chunks;
  for(size_t c = 0; c < starts.size(); ++c) {
    size_t end = c + 1 < starts.size() ? starts[c + 1] : n;
    chunks.push_back({starts[c], end - starts[c]});
  }
  return chunks;
}

size_t levels(int bits) { return size_t(1) << (bits - 1); }
size_t entryBytes(size_t kept, int bits) { return (kept * size_t(ChunkTopkMean::kOffsetBits + bits) + 7) / 8; }
}  // namespace

ChunkTopkMean::ChunkTopkMean(Transport& transport, size_t n, std::vector<size_t> chunkStarts, float density, int bits)
    : Allreduce(transport), n_(n), chunkStarts_(std::move(chunkStarts)), density_(density), bits_(bits) {
  ABORT_IF(bits != 1 && bits != 2, "chunk top-k values go in 1 or 2 bits, not {}", bits);
  ABORT_IF(!(density > 0.f && density <= 1.f), "chunk top-k density {} is not in (0, 1]", density);
  ABORT_IF(chunkStarts_.empty() || chunkStarts_[0] != 0 || !std::is_sorted(chunkStarts_.begin(), chunkStarts_.end()),
           "chunk top-k chunks must start at 0 and be sorted");
  for(const Chunk& c : chunksOf(n_, chunkStarts_))
    ABORT_IF(c.size > kChunk || c.begin + c.size > n_, "chunk top-k chunk of {} values at {} (at most {}, within {})",
             c.size, c.begin, kChunk, n_);
}

AllreduceResult ChunkTopkMean::reduce(const SparseVector&, size_t, size_t) {
  ABORT("{} averages dense vectors (average), it does not sum sparse pairs", name());
}

size_t ChunkTopkMean::keptIn(size_t size, float density) {
  // less a thousandth: the option is a float, and 0.1f x 300 is 30.0000004, not 31 values' worth
  return std::min(size, std::max<size_t>(1, size_t(std::ceil(double(density) * double(size) - 1e-3))));
}

size_t ChunkTopkMean::messageBytes(size_t n, const std::vector<size_t>& chunkStarts, float density, int bits) {
  size_t bytes = 0;
  for(const Chunk& c : chunksOf(n, chunkStarts))
    if(c.size)
      bytes += levels(bits) * sizeof(float) + entryBytes(keptIn(c.size, density), bits);
  return bytes;
}

std::vector<char> ChunkTopkMean::compress(const float* x, size_t n, const std::vector<size_t>& chunkStarts,
                                          float density, int bits, float* error) {
  std::vector<char> bytes(messageBytes(n, chunkStarts, density, bits), 0);
  std::copy(x, x + n, error);
  char* at = bytes.data();
  std::vector<uint32_t> order;
  for(const Chunk& c : chunksOf(n, chunkStarts)) {
    if(!c.size)
      continue;
    const float* v = x + c.begin;
    size_t kept = keptIn(c.size, density);
    // the kept offsets: the largest |v|, ties to the lower offset; then in ascending order
    order.resize(c.size);
    std::iota(order.begin(), order.end(), 0u);
    auto larger = [&](uint32_t a, uint32_t b) {
      float fa = std::fabs(v[a]), fb = std::fabs(v[b]);
      return fa > fb || (fa == fb && a < b);
    };
    std::nth_element(order.begin(), order.begin() + std::ptrdiff_t(kept - 1), order.end(), larger);
    std::sort(order.begin(), order.begin() + std::ptrdiff_t(kept));
    // the magnitudes: the mean |v| of the kept, or of those below it and of those at or above it
    double sum = 0;
    for(size_t j = 0; j < kept; ++j)
      sum += std::fabs(double(v[order[j]]));
    double mean = sum / double(kept);
    float level[2] = {float(mean), float(mean)};
    if(bits == 2) {
      double below = 0, above = 0;
      size_t nBelow = 0;
      for(size_t j = 0; j < kept; ++j) {
        double a = std::fabs(double(v[order[j]]));
        if(a < mean) {
          below += a;
          ++nBelow;
        } else {
          above += a;
        }
      }
      level[1] = float(above / double(kept - nBelow));  // at least the largest is at or above the mean
      level[0] = nBelow ? float(below / double(nBelow)) : level[1];
    }
    std::memcpy(at, level, levels(bits) * sizeof(float));
    at += levels(bits) * sizeof(float);
    BitWriter w(reinterpret_cast<unsigned char*>(at));
    for(size_t j = 0; j < kept; ++j) {
      uint32_t o = order[j];
      bool negative = v[o] < 0.f;
      uint32_t high = bits == 2 && std::fabs(double(v[o])) >= mean ? 1u : 0u;
      float sent = level[bits == 2 ? high : 0];
      w.put(o, kOffsetBits);
      w.put(negative ? 1u : 0u, 1);
      if(bits == 2)
        w.put(high, 1);
      error[c.begin + o] = v[o] - (negative ? -sent : sent);
    }
    at += entryBytes(kept, bits);
  }
  return bytes;
}

void ChunkTopkMean::decompress(const std::vector<char>& bytes, size_t n, const std::vector<size_t>& chunkStarts,
                               float density, int bits, float* out, float weight) {
  ABORT_IF(bytes.size() != messageBytes(n, chunkStarts, density, bits),
           "chunk top-k message of {} bytes for {} values in {} chunks ({} expected)", bytes.size(), n,
           chunkStarts.size(), messageBytes(n, chunkStarts, density, bits));
  const char* at = bytes.data();
  for(const Chunk& c : chunksOf(n, chunkStarts)) {
    if(!c.size)
      continue;
    size_t kept = keptIn(c.size, density);
    float level[2];
    std::memcpy(level, at, levels(bits) * sizeof(float));
    for(size_t l = 0; l < levels(bits); ++l)
      ABORT_IF(!std::isfinite(level[l]) || level[l] < 0.f, "chunk top-k message with the magnitude {}", level[l]);
    at += levels(bits) * sizeof(float);
    BitReader r(reinterpret_cast<const unsigned char*>(at));
    for(size_t j = 0; j < kept; ++j) {
      uint32_t o = r.get(kOffsetBits);
      bool negative = r.get(1) != 0;
      uint32_t high = bits == 2 ? r.get(1) : 0u;
      ABORT_IF(o >= c.size, "chunk top-k message with the offset {} in a chunk of {}", o, c.size);
      out[c.begin + o] += weight * (negative ? -level[high] : level[high]);
    }
    at += entryBytes(kept, bits);
  }
}

void ChunkTopkMean::average(std::vector<float>& x, std::vector<float>& error) {
  ABORT_IF(x.size() != n_, "{} for {} values given {}", name(), n_, x.size());
  error.resize(n_);
  std::vector<char> mine = compress(x.data(), n_, chunkStarts_, density_, bits_, error.data());
  std::vector<std::vector<char>> all = ringAllgather(std::move(mine), kChunkTopkGatherTag);
  std::fill(x.begin(), x.end(), 0.f);
  float weight = 1.f / float(transport_.size());
  for(const std::vector<char>& message : all)
    decompress(message, n_, chunkStarts_, density_, bits_, x.data(), weight);
}

}  // namespace marian
