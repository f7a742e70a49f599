#pragma once
// defines: marian::Range and equalPart — the one rule that splits [0, n) into equal consecutive
// parts (shards over devices and nodes, sentences over devices, scans over threads). Part k of p
// is [n k / p, n (k+1) / p): sizes differ by at most one and every process computes the same
// boundaries, which checkpoints and re-sharding rely on.
#include <cstddef>

namespace marian {

struct Range {
  size_t offset = 0, size = 0;
  size_t end() const { return offset + size; }
};

inline Range equalPart(size_t n, size_t k, size_t parts) {
  size_t begin = n * k / parts, end = n * (k + 1) / parts;
  return {begin, end - begin};
}

}  // namespace marian
