#pragma once
// defines: marian::createRowAllgather — the sum over ranks of row-sparse vectors: an embedding
// table's gradient from its lookups, whole rows of `width` values, a few of the table's rows.
// Every rank's rows that hold a pair go once around the ring (an allgather, P-1 steps), each
// sent whole with its row index once (4 + 4 width bytes a row, against 8 width bytes as pairs),
// and every rank adds them in rank order: the sum topka gives for the same pairs, bit for bit
// (the same additions in the same order), at about half its bytes.
#include <memory>

#include "comm/allreduce/allreduce.h"

namespace marian {

// Row r holds the values [r width, (r + 1) width) of the vector; the last row may be shorter.
std::unique_ptr<Allreduce> createRowAllgather(Transport& transport, size_t width);

}  // namespace marian
