#include "comm/allreduce/packing.h"

#include "common/byte_record.h"

namespace marian {

std::vector<char> packSparse(const SparseVector& v) {
  ByteWriter w;
  w.reserve(v.bytes());
  w.putArray(v.indices);
  w.putArray(v.values);
  return w.take();
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % 8 != 0, "Sparse message of {} bytes is not (index, value) pairs", bytes.size());
  ByteReader r(bytes, "Sparse message");
  SparseVector v;
  v.indices = r.getArray<uint32_t>(bytes.size() / 8);
  v.values = r.getArray<float>(bytes.size() / 8);
  return v;
}

}  // namespace marian
