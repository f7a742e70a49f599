// "gtopk" (seed 001, gTopKAllReduce): a reduction tree in which each parent applies the top
// operator to its own and its child's pairs (sum, then keep the k of largest magnitude), so
// messages never grow past k pairs; rank 0 ends with the global top-k and broadcasts it down a
// binomial tree. Round d pairs rank r with r+d for r a multiple of 2d, which works for any P.
// Per rank at most about 2 k log2(P) pairs on the wire (the paper's 4k log P values).
// The result is only the selection: entries a rank sent that are not in it go back to its
// residual (the paper's Algorithm 4, line 10). The selection is the tree's, but its values are
// every rank's sum: in the paper's tree a rank's entry that an inner merge dropped and the final
// selection kept is lost (selected, it does not go back to the residual); here every rank's
// values at the selected indices are gathered around a ring ((P-1) k values) and summed in rank
// order, so nothing a rank sent is lost on any number of ranks.
#include <limits>

#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"
#include "common/byte_record.h"

namespace marian {

namespace {

class GlobalTopkAllreduce : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "gtopk"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t k) override {
    checkIndices(local, n);
    if(k == 0)
      k = std::numeric_limits<size_t>::max();
    int P = transport_.size(), r = transport_.rank();
    SparseVector acc = local;
    int round = 0, d = 1;
    for(; d < P; d *= 2, ++round) {  // reduce: who is left at distance d pairs up
      if(r % (2 * d) == d) {
        send(r - d, round, packSparse(acc));
        break;
      }
      if(r + d < P) {
        SparseVector in = unpackSparse(recv(r + d, round));
        checkIndices(in, n);
        acc = largestK(mergeSparse(acc, in), k);
      }
    }
    const int broadcastRound = 64;
    if(r == 0) {
      acc = largestK(acc, k);
    } else {  // the rank this one reported to sends the result back
      acc = unpackSparse(recv(r - d, broadcastRound));
      checkIndices(acc, n);
    }
    std::vector<char> bytes = packSparse(acc);
    for(d /= 2; d >= 1; d /= 2)  // rank 0 leaves the loop with d the first power >= P
      if(r + d < P)
        send(r + d, broadcastRound, bytes);
    if(P > 2) {  // on 2 ranks rank 0's merge already summed both, in this order
      std::vector<float> mine = valuesAt(local, acc.indices);
      std::vector<std::vector<char>> all = ringAllgather(packArray(mine), broadcastRound + 1);
      std::fill(acc.values.begin(), acc.values.end(), 0.f);
      for(const std::vector<char>& bytes : all) {
        std::vector<float> theirs = unpackArray<float>(bytes, "gtopk values message");
        ABORT_IF(theirs.size() != acc.size(), "gtopk: {} values for {} selected entries", theirs.size(), acc.size());
        for(size_t j = 0; j < acc.size(); ++j)
          acc.values[j] += theirs[j];
      }
    }
    AllreduceResult result;
    result.isSelection = true;
    result.sparse = std::move(acc);
    return result;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createGlobalTopk(Transport& t, const AllreduceSettings&) {
  return std::make_unique<GlobalTopkAllreduce>(t);
}

}  // namespace marian
