#include "comm/allreduce/packing.h"

#include "common/byte_record.h"

namespace marian {

std::vector<char> packSparse(SparseView v) {
  ByteWriter w;
  w.reserve(v.size * kSparsePairBytes);
  putSparse(w, v);
  return w.take();
}

SparseView readSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % kSparsePairBytes != 0, "Sparse message of {} bytes is not (index, value) pairs",
           bytes.size());
  return sparseAt(bytes.data(), bytes.size() / kSparsePairBytes);  // vector storage is aligned for any value
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  SparseView v = readSparse(bytes);
  SparseVector out;
  out.indices.assign(v.indices, v.indices + v.size);
  out.values.assign(v.values, v.values + v.size);
  return out;
}

}  // namespace marian
