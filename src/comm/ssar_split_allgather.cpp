// "ssar-split" (seed 000, SSAR_Split_AllGather): the index space is cut into P contiguous
// blocks, one per rank; every rank sends each block's part of its pairs straight to the block's
// owner (P-1 steps), the owner sums them, and the summed blocks, disjoint, are gathered around
// the ring (P-1 steps). For large inputs: each rank receives about 2k pairs in the worst case.
#include <algorithm>

#include "comm/allreduce.h"
#include "common/error.h"

namespace marian {

namespace {

class SsarSplitAllgather : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "ssar-split"; }

  std::vector<float> sum(const SparseVector& local, size_t n) override {
    int P = mpi_.size(), r = mpi_.rank();
    auto blockBegin = [&](int b) { return uint32_t(n * size_t(b) / size_t(P)); };
    // the part of `local` in block b
    auto part = [&](int b) {
      SparseVector out;
      auto lo = std::lower_bound(local.indices.begin(), local.indices.end(), blockBegin(b));
      auto hi = std::lower_bound(local.indices.begin(), local.indices.end(), blockBegin(b + 1));
      for(auto it = lo; it != hi; ++it) {
        out.indices.push_back(*it);
        out.values.push_back(local.values[size_t(it - local.indices.begin())]);
      }
      return out;
    };
    // 1. split: every rank's part of my block comes to me; summed in rank order
    std::vector<SparseVector> parts(static_cast<size_t>(P));
    parts[size_t(r)] = part(r);
    for(int s = 1; s < P; ++s) {
      int dest = (r + s) % P, source = (r - s + P) % P;
      parts[size_t(source)] = unpackSparse(exchange(dest, source, s, packSparse(part(dest))));
    }
    SparseVector mine;
    for(const SparseVector& p : parts)
      mine = mergeSparse(mine, p);
    // 2. allgather of the disjoint block sums around the ring
    std::vector<float> v(n, 0.f);
    ringAllgatherAdd(mine, v, P);
    return v;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createSsarSplit(MpiTransport& t) { return std::make_unique<SsarSplitAllgather>(t); }

}  // namespace marian
