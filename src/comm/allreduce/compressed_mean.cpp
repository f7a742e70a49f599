#include "comm/allreduce/compressed_mean.h"

#include <algorithm>

#include "comm/message_tags.h"
#include "common/error.h"

namespace marian {

CompressedMeanAllreduce::CompressedMeanAllreduce(Transport& transport, size_t n)
    : Allreduce(transport), n_(n), workerError_(n, 0.f), serverError_(chunk(transport.rank()).size, 0.f) {}

AllreduceResult CompressedMeanAllreduce::reduce(const SparseVector&, size_t, size_t) {
  ABORT("{} compresses dense vectors (averageCompressed), it does not sum sparse pairs", name());
}

void CompressedMeanAllreduce::setErrors(std::vector<float> worker, std::vector<float> server) {
  ABORT_IF(worker.size() != n_ || server.size() != serverError_.size(),
           "{} errors of {} and {} values for a vector of {} and a chunk of {}", name(), worker.size(), server.size(),
           n_, serverError_.size());
  workerError_ = std::move(worker);
  serverError_ = std::move(server);
}

void CompressedMeanAllreduce::averageCompressed(std::vector<float>& values) {
  ABORT_IF(values.size() != n_, "{} for {} values given {}", name(), n_, values.size());
  int P = transport_.size(), r = transport_.rank();
  std::vector<float> x(n_);
  for(size_t i = 0; i < n_; ++i)
    x[i] = values[i] + workerError_[i];
  auto encodeChunk = [&](int j) {
    Range c = chunk(j);
    return encode(j, x.data() + c.offset, workerError_.data() + c.offset);
  };
  // worker: chunk j to its server (destinations rotated as in the split step); server: the mean
  Range mine = chunk(r);
  std::vector<float> y(mine.size, 0.f);
  decode(r, encodeChunk(r), y.data(), 1.f / float(P));
  for(int s = 1; s < P; ++s) {
    int dest = (r + s) % P, source = (r - s + P) % P;
    decode(r, exchange(dest, source, kToServersTag + s - 1, encodeChunk(dest)), y.data(), 1.f / float(P));
  }
  for(size_t i = 0; i < mine.size; ++i)
    y[i] += serverError_[i];
  std::vector<char> served = encode(r, y.data(), serverError_.data());
  // every server's chunk to every rank
  std::vector<std::vector<char>> all = ringAllgather(std::move(served), kFromServersTag);
  std::fill(values.begin(), values.end(), 0.f);
  for(int j = 0; j < P; ++j)
    decode(j, all[size_t(j)], values.data() + chunk(j).offset, 1.f);
}

}  // namespace marian
