#pragma once
// defines: marian::GradientBucket and gradientBuckets — how sync-SGD cuts the flat gradient into
// the buckets it reduces while backward goes on (--bucket-size, as PyTorch DDP's): parameters in
// the order backward makes their gradients final, so that the first bucket is ready first. A
// bucket's parameters need not be neighbours in the flat layout (it is sorted by name).
#include <vector>

#include "comm/transport.h"
#include "common/equal_split.h"
#include "graph/parameters.h"

namespace marian {

// Disjoint ranges of the flat layout, ascending; the bucket's values are their concatenation.
using GradientBucket = std::vector<Range>;

size_t bucketSize(const GradientBucket& bucket);
// Errors unless the buckets' ranges together cover [0, n) once.
void checkBucketsCover(const std::vector<GradientBucket>& buckets, size_t n);
// By parameter index: the bucket that holds it (whole, or an error).
std::vector<size_t> bucketOfEachParameter(const Parameters& layout, const std::vector<GradientBucket>& buckets);

// The parameters of `layout` taken in `order` (every parameter index once: the order in which
// backward makes their gradients final, ExpressionGraph::gradientOrder), a bucket closed before
// the parameter that would take it past `floats` values (a larger parameter goes alone);
// neighbouring parameters of a bucket make one range. floats = 0: one bucket of everything.
std::vector<GradientBucket> gradientBuckets(const Parameters& layout, size_t floats, const std::vector<size_t>& order);

// The ranks must cut the same buckets (collectives match by order and size) and put the same
// tables' lookups apart: rank 0's are broadcast as a hash and compared; an error on a rank whose
// differ.
void checkSameBucketsAsRankZero(Transport& transport, const Parameters& layout,
                                const std::vector<GradientBucket>& buckets, const std::vector<size_t>& tablesApart);

}  // namespace marian
