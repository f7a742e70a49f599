#pragma once
// defines: what the allreduce algorithms put on the wire: sparse (index, value) pairs as all
// indices then all values (8 bytes a pair), dense values as they are.
#include <vector>

#include "comm/sparse_vector.h"

namespace marian {

std::vector<char> packSparse(const SparseVector& v);
SparseVector unpackSparse(const std::vector<char>& bytes);
std::vector<char> packDense(const float* values, size_t n);

}  // namespace marian
