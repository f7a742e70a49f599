#pragma once
// defines: marian::SparseVector — (index, value) pairs of a flat float range, sorted by index;
// and their layout on the wire (what gradient and delta dropping and the sparse allreduces send):
// a run of pairs is all their indices, then all their values, kSparsePairBytes a pair.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/byte_record.h"

namespace marian {

// (index, value) pairs read where they lie (a received message, a part of a SparseVector).
struct SparseView {
  const uint32_t* indices = nullptr;
  const float* values = nullptr;
  size_t size = 0;
};

struct SparseVector {
  std::vector<uint32_t> indices;  // ascending, relative to the start of the range
  std::vector<float> values;

  size_t size() const { return indices.size(); }
  size_t bytes() const;
  SparseView view() const { return {indices.data(), values.data(), indices.size()}; }
  void clear() {
    indices.clear();
    values.clear();
  }
  // dense[i] += values for every entry
  void addTo(float* dense) const {
    for(size_t k = 0; k < indices.size(); ++k)
      dense[indices[k]] += values[k];
  }
};

constexpr size_t kSparsePairBytes = sizeof(uint32_t) + sizeof(float);
inline size_t SparseVector::bytes() const { return indices.size() * kSparsePairBytes; }

// The pairs of v for which keep(k) holds (every pair: keep null), written as a run.
template <class Keep>
void putSparse(ByteWriter& w, SparseView v, Keep keep) {
  for(size_t k = 0; k < v.size; ++k)
    if(keep(k))
      w.put(v.indices[k]);
  for(size_t k = 0; k < v.size; ++k)
    if(keep(k))
      w.put(v.values[k]);
}
inline void putSparse(ByteWriter& w, SparseView v) {
  w.putArray(v.indices, v.size);
  w.putArray(v.values, v.size);
}
// A run of `count` pairs at `bytes` (aligned for uint32), read where it lies.
inline SparseView sparseAt(const char* bytes, size_t count) {
  return {reinterpret_cast<const uint32_t*>(bytes), reinterpret_cast<const float*>(bytes + count * sizeof(uint32_t)),
          count};
}

}  // namespace marian
