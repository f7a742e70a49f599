#pragma once
// defines: the operations on sorted sparse vectors and index ranges that the allreduce
// algorithms and their reference share.
#include <cstdint>
#include <vector>

#include "comm/sparse_vector.h"

namespace marian {

// a + b, both sorted by index; entries present in both are added (a's value first)
SparseVector mergeSparse(const SparseVector& a, const SparseVector& b);
// The sum of sorted parts in one pass, each index's values added in the parts' order (as merging
// them one after another into the first would add them, without writing the first ones again).
SparseVector mergeSparse(const std::vector<SparseView>& parts);
// The pairs of v with index in [begin, end), where they lie in v
SparseView sliceView(SparseView v, uint32_t begin, uint32_t end);
// The pairs of v with index in [begin, end)
SparseVector slice(const SparseVector& v, uint32_t begin, uint32_t end);
// The same, with indices relative to begin (a part of the vector as a vector of its own)
SparseVector sliceFrom(const SparseVector& v, uint32_t begin, uint32_t end);
// The k entries of v with the largest magnitude (ties: the lower index), in index order.
SparseVector largestK(const SparseVector& v, size_t k);
// v's values at `indices` (sorted), 0 where v has none
std::vector<float> valuesAt(const SparseVector& v, const std::vector<uint32_t>& indices);
// Equal blocks of [0, n) for P owners: P+1 starts, the last = n.
std::vector<uint32_t> equalBlocks(size_t n, int P);

}  // namespace marian
