// "ssar-recdbl" (seed 000, SSAR_Rec_Dbl): recursive doubling in which each stage exchanges the
// sparse vector summed so far with the partner at distance 2^t and adds it, so messages grow
// with the union of indices: log2(P) steps, between k log2(P) and k (P-1) pairs. A P that is not
// a power of two first folds the extra ranks into the lower ones and sends them the result.
#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"

namespace marian {

namespace {

class SsarRecursiveDoubling : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "ssar-recdbl"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    int P = transport_.size(), r = transport_.rank();
    int p2 = 1;
    while(p2 * 2 <= P)
      p2 *= 2;
    const int foldRound = 0, resultRound = 1, firstStage = 2;
    SparseVector acc = local;
    if(r >= p2) {  // an extra rank: hand over, then wait for the result
      send(r - p2, foldRound, packSparse(acc));
      acc = unpackSparse(recv(r - p2, resultRound));
    } else {
      if(r + p2 < P)
        acc = mergeSparse(acc, unpackSparse(recv(r + p2, foldRound)));
      for(int d = 1, stage = firstStage; d < p2; d *= 2, ++stage) {
        int partner = r ^ d;
        SparseVector in = unpackSparse(exchange(partner, partner, stage, packSparse(acc)));
        // sum in rank order, so that every rank adds the same floats in the same order
        acc = partner < r ? mergeSparse(in, acc) : mergeSparse(acc, in);
      }
      if(r + p2 < P)
        send(r + p2, resultRound, packSparse(acc));
    }
    checkIndices(acc, n);
    AllreduceResult result;
    result.sparse = std::move(acc);
    return result;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createSsarRecursiveDoubling(Transport& t, const AllreduceSettings&) {
  return std::make_unique<SsarRecursiveDoubling>(t);
}

}  // namespace marian
