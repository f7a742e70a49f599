// "ring": dense reduce-scatter then allgather around the ring of ranks, P-1 steps each; every
// rank sends and receives 2 (P-1)/P n values, the bandwidth-optimal dense allreduce. Our own, so
// that its bytes are counted and it can be overlapped; the reference the sparse ones must match.
#include <cstring>

#include "comm/allreduce/dense_allreduce.h"
#include "comm/allreduce/packing.h"

namespace marian {

namespace {

class RingAllreduce : public DenseAllreduce {
public:
  using DenseAllreduce::DenseAllreduce;
  std::string name() const override { return "ring"; }

  void sumDense(std::vector<float>& v) override {
    int P = transport_.size(), r = transport_.rank();
    if(P == 1)
      return;
    size_t n = v.size();
    int next = (r + 1) % P, prev = (r + P - 1) % P;
    auto chunk = [&](int c) {
      size_t begin = n * size_t(c) / size_t(P), end = n * size_t(c + 1) / size_t(P);
      return std::make_pair(begin, end - begin);
    };
    for(int s = 0; s < P - 1; ++s) {  // reduce-scatter: after it, rank r owns chunk r+1
      auto [sendBegin, sendSize] = chunk((r - s + P) % P);
      auto [recvBegin, recvSize] = chunk((r - s - 1 + 2 * P) % P);
      std::vector<char> in = exchange(next, prev, s, packDense(v.data() + sendBegin, sendSize));
      const float* values = reinterpret_cast<const float*>(in.data());
      for(size_t i = 0; i < recvSize; ++i)
        v[recvBegin + i] += values[i];
    }
    for(int s = 0; s < P - 1; ++s) {  // allgather of the owned chunks
      auto [sendBegin, sendSize] = chunk((r - s + 1 + P) % P);
      auto [recvBegin, recvSize] = chunk((r - s + P) % P);
      std::vector<char> in = exchange(next, prev, P + s, packDense(v.data() + sendBegin, sendSize));
      if(recvSize)
        std::memcpy(v.data() + recvBegin, in.data(), recvSize * sizeof(float));
    }
  }
};

}  // namespace

std::unique_ptr<Allreduce> createRing(Transport& t, const AllreduceSettings&) {
  return std::make_unique<RingAllreduce>(t);
}

}  // namespace marian
