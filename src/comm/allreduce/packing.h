#pragma once
// defines: the sparse record of the allreduce algorithms: (index, value) pairs as all indices,
// then all values (8 bytes a pair), sized by the record (common/byte_record.h's format; dense
// payloads are packArray's).
#include <vector>

#include "comm/sparse_vector.h"

namespace marian {

std::vector<char> packSparse(SparseView v);
inline std::vector<char> packSparse(const SparseVector& v) { return packSparse(v.view()); }
// The pairs read where they lie in `bytes` (which must outlive the view), checked as unpackSparse
// checks them: what a receiver merges or appends is not copied out of the message first.
SparseView readSparse(const std::vector<char>& bytes);
SparseVector unpackSparse(const std::vector<char>& bytes);

}  // namespace marian
