#pragma once
// defines: marian::Range, equalPart — the one rule that splits [0, n) into equal consecutive
// parts (shards over devices and nodes, sentences over devices, scans over threads). Part k of p
// is [n k / p, n (k+1) / p): sizes differ by at most one and every process computes the same
// boundaries, which checkpoints and re-sharding rely on. rangeOf, placeRange: a range's values
// out of and into an array of the global layout, bounds-checked.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/error.h"

namespace marian {

struct Range {
  size_t offset = 0, size = 0;
  size_t end() const { return offset + size; }
};

inline Range equalPart(size_t n, size_t k, size_t parts) {
  size_t begin = n * k / parts, end = n * (k + 1) / parts;
  return {begin, end - begin};
}

// The values of range r of `global`.
template <class T>
std::vector<T> rangeOf(const std::vector<T>& global, Range r) {
  ABORT_IF(r.end() > global.size(), "Range [{}, {}) outside an array of {} values", r.offset, r.end(), global.size());
  return std::vector<T>(global.begin() + long(r.offset), global.begin() + long(r.end()));
}

// `part`, the values of range r, written into `global` at r.
template <class T>
void placeRange(std::vector<T>& global, Range r, const std::vector<T>& part) {
  ABORT_IF(part.size() != r.size || r.end() > global.size(), "{} values for range [{}, {}) of an array of {}",
           part.size(), r.offset, r.end(), global.size());
  std::copy(part.begin(), part.end(), global.begin() + long(r.offset));
}

}  // namespace marian
