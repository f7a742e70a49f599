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
  std::vector<float>& x = x_;  // kept between calls: a vector's size allocated anew faults its pages in again
  x.resize(n_);
  for(size_t i = 0; i < n_; ++i)
    x[i] = values[i] + workerError_[i];
  auto encodeChunk = [&](int j) {
    Range c = chunk(j);
    return encode(j, x.data() + c.offset, workerError_.data() + c.offset);
  };
  // worker: chunk j to its server; server: the mean, the chunks added in a fixed order once all
  // have come (from r - 1, r - 2, ...: the ring's order, the same sums)
  Range mine = chunk(r);
  std::vector<float>& y = y_;
  y.assign(mine.size, 0.f);
  std::vector<std::vector<char>> toServers(static_cast<size_t>(P));
  std::vector<const std::vector<char>*> toRank(static_cast<size_t>(P));
  for(int j = 0; j < P; ++j) {
    toServers[size_t(j)] = encodeChunk(j);
    toRank[size_t(j)] = &toServers[size_t(j)];
  }
  decode(r, toServers[size_t(r)], y.data(), 1.f / float(P));
  std::vector<std::vector<char>> received =
      directExchange(toRank, std::vector<size_t>(size_t(P), encodedSize(r)), kToServersTag);
  for(int s = 1; s < P; ++s)
    decode(r, received[size_t((r - s + P) % P)], y.data(), 1.f / float(P));
  for(size_t i = 0; i < mine.size; ++i)
    y[i] += serverError_[i];
  // every server's chunk to every rank
  std::vector<std::vector<char>> all(static_cast<size_t>(P));
  all[size_t(r)] = encode(r, y.data(), serverError_.data());
  std::vector<size_t> sizes(static_cast<size_t>(P));
  for(int j = 0; j < P; ++j)
    sizes[size_t(j)] = encodedSize(j);
  std::vector<std::vector<char>> served =
      directExchange(std::vector<const std::vector<char>*>(size_t(P), &all[size_t(r)]), sizes, kFromServersTag);
  for(int j = 0; j < P; ++j)
    if(j != r)
      all[size_t(j)] = std::move(served[size_t(j)]);
  std::fill(values.begin(), values.end(), 0.f);
  for(int j = 0; j < P; ++j)
    decode(j, all[size_t(j)], values.data() + chunk(j).offset, 1.f);
}

}  // namespace marian
