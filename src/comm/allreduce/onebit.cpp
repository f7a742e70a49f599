#include "comm/allreduce/onebit.h"

#include <cmath>
#include <cstring>

#include "common/error.h"

namespace marian {

namespace {
constexpr int kToServers = 6 << 12, kFromServers = 7 << 12;  // rounds apart from every algorithm's
}

OneBitAllreduce::OneBitAllreduce(Transport& transport, size_t n)
    : Allreduce(transport), n_(n), workerError_(n, 0.f), serverError_(chunk(transport.rank()).size, 0.f) {}

AllreduceResult OneBitAllreduce::reduce(const SparseVector&, size_t, size_t) {
  ABORT("onebit compresses dense vectors (averageCompressed), it does not sum sparse pairs");
}

void OneBitAllreduce::setErrors(std::vector<float> worker, std::vector<float> server) {
  ABORT_IF(worker.size() != n_ || server.size() != serverError_.size(),
           "1-bit errors of {} and {} values for a vector of {} and a chunk of {}", worker.size(), server.size(), n_,
           serverError_.size());
  workerError_ = std::move(worker);
  serverError_ = std::move(server);
}

std::vector<char> OneBitAllreduce::compress(const float* x, size_t n, float* error) {
  double squares = 0;
  for(size_t i = 0; i < n; ++i)
    squares += double(x[i]) * double(x[i]);
  float scale = n ? float(std::sqrt(squares / double(n))) : 0.f;
  std::vector<char> bytes(sizeof(float) + (n + 7) / 8, 0);
  std::memcpy(bytes.data(), &scale, sizeof(float));
  auto* bits = reinterpret_cast<unsigned char*>(bytes.data() + sizeof(float));
  for(size_t i = 0; i < n; ++i) {
    bool negative = x[i] < 0.f;
    if(negative)
      bits[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
    error[i] = x[i] - (negative ? -scale : scale);
  }
  return bytes;
}

void OneBitAllreduce::decompress(const std::vector<char>& bytes, size_t n, float* out, float weight) {
  ABORT_IF(bytes.size() != sizeof(float) + (n + 7) / 8, "1-bit chunk of {} bytes for {} values", bytes.size(), n);
  float scale;
  std::memcpy(&scale, bytes.data(), sizeof(float));
  ABORT_IF(!std::isfinite(scale) || scale < 0.f, "1-bit chunk with the scale {}", scale);
  const auto* bits = reinterpret_cast<const unsigned char*>(bytes.data() + sizeof(float));
  for(size_t i = 0; i < n; ++i)
    out[i] += weight * ((bits[i / 8] >> (i % 8)) & 1u ? -scale : scale);
}

void OneBitAllreduce::averageCompressed(std::vector<float>& values) {
  ABORT_IF(values.size() != n_, "onebit for {} values given {}", n_, values.size());
  int P = transport_.size(), r = transport_.rank();
  std::vector<float> x(n_);
  for(size_t i = 0; i < n_; ++i)
    x[i] = values[i] + workerError_[i];
  auto compressChunk = [&](int j) {
    Range c = chunk(j);
    return compress(x.data() + c.offset, c.size, workerError_.data() + c.offset);
  };
  // worker: chunk j to its server (destinations rotated as in the split step); server: the mean
  Range mine = chunk(r);
  std::vector<float> y(mine.size, 0.f);
  decompress(compressChunk(r), mine.size, y.data(), 1.f / float(P));
  for(int s = 1; s < P; ++s) {
    int dest = (r + s) % P, source = (r - s + P) % P;
    decompress(exchange(dest, source, kToServers + s - 1, compressChunk(dest)), mine.size, y.data(), 1.f / float(P));
  }
  for(size_t i = 0; i < mine.size; ++i)
    y[i] += serverError_[i];
  std::vector<char> served = compress(y.data(), mine.size, serverError_.data());
  // every server's chunk to every rank
  std::vector<std::vector<char>> all = ringAllgather(std::move(served), kFromServers);
  std::fill(values.begin(), values.end(), 0.f);
  for(int j = 0; j < P; ++j)
    decompress(all[size_t(j)], chunk(j).size, values.data() + chunk(j).offset, 1.f);
}

}  // namespace marian
