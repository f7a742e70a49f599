// "topka" (TopKAllReduce of seeds 000-002): every rank's (index, value) pairs travel once around
// the ring (an allgather, P-1 steps) and every rank adds them all, in rank order: (P-1) k pairs
// received per rank for k pairs each.
#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"

namespace marian {

namespace {

class TopkAllreduce : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "topka"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    AllreduceResult result;
    for(const std::vector<char>& piece : ringAllgather(packSparse(local), 0)) {
      SparseVector in = unpackSparse(piece);
      checkIndices(in, n);
      result.sparse = mergeSparse(result.sparse, in);
    }
    return result;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createTopkA(Transport& t, const AllreduceSettings&) {
  return std::make_unique<TopkAllreduce>(t);
}

}  // namespace marian
