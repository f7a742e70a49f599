#include "comm/allreduce/packing.h"

#include "common/byte_record.h"

namespace marian {

std::vector<char> packSparse(SparseView v) {
  ByteWriter w;
  w.reserve(v.size * 8);
  w.putArray(v.indices, v.size);
  w.putArray(v.values, v.size);
  return w.take();
}

SparseView readSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % 8 != 0, "Sparse message of {} bytes is not (index, value) pairs", bytes.size());
  size_t n = bytes.size() / 8;
  // vector storage is aligned for any value, and the values start 4n bytes in
  return {reinterpret_cast<const uint32_t*>(bytes.data()), reinterpret_cast<const float*>(bytes.data() + 4 * n), n};
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  SparseView v = readSparse(bytes);
  SparseVector out;
  out.indices.assign(v.indices, v.indices + v.size);
  out.values.assign(v.values, v.values + v.size);
  return out;
}

}  // namespace marian
