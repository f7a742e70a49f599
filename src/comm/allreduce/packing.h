#pragma once
// defines: the sparse record of the allreduce algorithms: a run of (index, value) pairs
// (comm/sparse_vector.h's layout) sized by the record (dense payloads are packArray's).
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
