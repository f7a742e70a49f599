// "topka": every rank's (index, value) pairs travel once around the ring (an allgather, P-1
// steps) and every rank sums all of them: 2k(P-1) values received per rank for k pairs each.
#include "comm/allreduce.h"
#include "common/error.h"

namespace marian {

namespace {

class TopkAllreduce : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "topka"; }

  std::vector<float> sum(const SparseVector& local, size_t n) override {
    for(uint32_t i : local.indices)
      ABORT_IF(i >= n, "topka: index {} outside dimension {}", i, n);
    std::vector<float> v(n, 0.f);
    ringAllgatherAdd(local, v, 0);
    return v;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createTopkA(MpiTransport& t) { return std::make_unique<TopkAllreduce>(t); }

}  // namespace marian
