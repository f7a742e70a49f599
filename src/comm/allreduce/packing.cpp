#include "comm/allreduce/packing.h"

#include <cstring>

#include "common/error.h"

namespace marian {

std::vector<char> packSparse(const SparseVector& v) {
  std::vector<char> out(v.bytes());
  if(v.size()) {
    std::memcpy(out.data(), v.indices.data(), v.size() * sizeof(uint32_t));
    std::memcpy(out.data() + v.size() * sizeof(uint32_t), v.values.data(), v.size() * sizeof(float));
  }
  return out;
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % 8 != 0, "Sparse message of {} bytes is not (index, value) pairs", bytes.size());
  SparseVector v;
  size_t n = bytes.size() / 8;
  v.indices.resize(n);
  v.values.resize(n);
  if(n) {
    std::memcpy(v.indices.data(), bytes.data(), n * sizeof(uint32_t));
    std::memcpy(v.values.data(), bytes.data() + n * sizeof(uint32_t), n * sizeof(float));
  }
  return v;
}

std::vector<char> packDense(const float* values, size_t n) {
  std::vector<char> out(n * sizeof(float));
  if(n)
    std::memcpy(out.data(), values, out.size());
  return out;
}

}  // namespace marian
