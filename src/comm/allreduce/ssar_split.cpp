// "ssar-split" (seed 000, SSAR_Split_AllGather): the index space is cut into P equal blocks, one
// per rank; every rank sends each block's part of its pairs straight to the block's owner
// (P-1 steps), the owner sums them, and the summed blocks, disjoint, are gathered around the
// ring (P-1 steps). Each rank receives about 2k pairs in the worst case.
#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"

namespace marian {

namespace {

class SsarSplitAllgather : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "ssar-split"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    int P = transport_.size();
    std::vector<uint32_t> blocks = equalBlocks(n, P);
    SparseVector mine = splitAndReduce(local, blocks, 0);
    AllreduceResult result;
    for(const std::vector<char>& piece : ringAllgather(packSparse(mine), P)) {
      SparseVector in = unpackSparse(piece);
      checkIndices(in, n);
      result.sparse = mergeSparse(result.sparse, in);  // disjoint blocks: a concatenation
    }
    return result;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createSsarSplit(Transport& t, const AllreduceSettings&) {
  return std::make_unique<SsarSplitAllgather>(t);
}

}  // namespace marian
