#pragma once
// defines: marian::SparseVector — (index, value) pairs of a flat float range, sorted by index.
// What gradient and delta dropping put on the wire: 8 bytes per entry.
#include <cstddef>
#include <cstdint>
#include <vector>

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
  size_t bytes() const { return indices.size() * (sizeof(uint32_t) + sizeof(float)); }
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

}  // namespace marian
