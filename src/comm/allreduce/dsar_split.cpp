// "dsar-split" (seed 000, DSAR_Split_AllGather): the split step of ssar-split, after which each
// owner looks at its summed block and sends it on dense when (index, value) pairs would take more
// bytes than the block's plain values (fill-in: overlapping indices from P ranks). The allgather
// then moves each block in whichever form is smaller, so no rank ever receives more than about
// k pairs + (P-1)/P n values, and the result turns dense when any block did.
#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"
#include "common/byte_record.h"

namespace marian {

namespace {

constexpr uint32_t kSparseBlock = 0, kDenseBlock = 1;

class DsarSplitAllgather : public Allreduce {
public:
  using Allreduce::Allreduce;
  std::string name() const override { return "dsar-split"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    int P = transport_.size(), r = transport_.rank();
    std::vector<uint32_t> blocks = equalBlocks(n, P);
    SparseVector mine = splitAndReduce(local, blocks, 0);

    // [kind: uint32][the block's values, or its sparse record]
    ByteWriter out;
    size_t length = blocks[size_t(r) + 1] - blocks[size_t(r)];
    if(mine.bytes() > length * sizeof(float)) {
      std::vector<float> dense(length, 0.f);
      for(size_t j = 0; j < mine.size(); ++j)
        dense[mine.indices[j] - blocks[size_t(r)]] = mine.values[j];
      out.put(kDenseBlock);
      out.putArray(dense);
    } else {
      out.put(kSparseBlock);
      out.putArray(packSparse(mine));
    }
    std::vector<std::vector<char>> pieces = ringAllgather(out.take(), P);

    AllreduceResult result;
    for(const auto& piece : pieces)
      result.isDense = result.isDense || kindOf(piece) == kDenseBlock;
    if(result.isDense)
      result.dense.assign(n, 0.f);
    for(int b = 0; b < P; ++b) {
      const std::vector<char>& piece = pieces[size_t(b)];
      ByteReader read(piece, "dsar-split block message");
      read.get<uint32_t>();  // kindOf checked it
      size_t begin = blocks[size_t(b)], blockLength = blocks[size_t(b) + 1] - begin;
      if(kindOf(piece) == kDenseBlock) {
        ABORT_IF(read.left() != blockLength * sizeof(float), "dsar-split: dense block {} has {} bytes, not {}", b,
                 read.left(), blockLength * sizeof(float));
        std::vector<float> values = read.getArray<float>(blockLength);
        std::copy(values.begin(), values.end(), result.dense.begin() + long(begin));
      } else {
        SparseVector in = unpackSparse(read.getArray<char>(read.left()));
        for(uint32_t i : in.indices)
          ABORT_IF(i < begin || i >= begin + blockLength, "dsar-split: index {} outside block {}", i, b);
        if(result.isDense)
          in.addTo(result.dense.data());
        else
          result.sparse = mergeSparse(result.sparse, in);
      }
    }
    return result;
  }

private:
  static uint32_t kindOf(const std::vector<char>& piece) {
    uint32_t kind = ByteReader(piece, "dsar-split block message").get<uint32_t>();
    ABORT_IF(kind != kSparseBlock && kind != kDenseBlock, "dsar-split: unknown block kind {}", kind);
    return kind;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createDsarSplit(Transport& t, const AllreduceSettings&) {
  return std::make_unique<DsarSplitAllgather>(t);
}

}  // namespace marian
