#pragma once
// defines: marian::segmentStarts, segmentsIn, segmentStartsIn — where the pieces of a flat vector
// that a compressed exchange scales (or selects from) on their own begin: every parameter tensor's
// start and every `block` values within a tensor, so that a tensor of small values (a layer norm's)
// never goes at a matrix's scale. The 1-bit mean (onebit.h), the outer exchanges' 1-bit and chunk
// top-k codes and marian-commbench cut their vectors by these rules.
#include <cstddef>
#include <vector>

#include "common/equal_split.h"

namespace marian {

// Every parameter's start (sorted, within n) and, with block > 0, every `block` values inside a
// parameter; 0 first.
std::vector<size_t> segmentStarts(const std::vector<size_t>& parameterStarts, size_t n, size_t block);

// The segments of range c: c's own start and every segment start inside it, relative to c.
std::vector<size_t> segmentsIn(Range c, const std::vector<size_t>& segmentStarts);

// The segments of range c of a vector whose parameters start at parameterStarts, cut into blocks
// of `block` values: segmentStarts of c's own parameter pieces, relative to c.
std::vector<size_t> segmentStartsIn(Range c, const std::vector<size_t>& parameterStarts, size_t block);

}  // namespace marian
