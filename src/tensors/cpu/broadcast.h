#pragma once
// defines: cpu::forEachBroadcast — the one loop nest behind every broadcasting CPU kernel.
#include <array>

#include "tensors/shape.h"

namespace marian {
namespace cpu {

// Calls body(i, ia, ib) for every element i of `out` (row-major), where ia and ib are the
// offsets of the elements of `a` and `b` that broadcast onto it; only for the rows [rowBegin,
// rowEnd) of out seen as broadcastRows(out) rows of its last axis (a part of the work for one
// thread). The innermost loop is written out for the common strides (1: along the row, 0:
// broadcast) so that the compiler vectorises it (a bias added to every row, a row of scales).
template <class Body>
void forEachBroadcast(const Shape& out, const Shape& a, const Shape& b, size_t rowBegin, size_t rowEnd,
                      Body&& body) {
  auto d = out.padded();
  auto sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
  size_t n = size_t(d[3]), a3 = sa[3], b3 = sb[3];
  for(size_t row = rowBegin; row < rowEnd; ++row) {
    size_t i2 = row % size_t(d[2]), i1 = row / size_t(d[2]) % size_t(d[1]), i0 = row / (size_t(d[2]) * d[1]);
    size_t i = row * n;
    size_t ia = i0 * sa[0] + i1 * sa[1] + i2 * sa[2];
    size_t ib = i0 * sb[0] + i1 * sb[1] + i2 * sb[2];
    if(a3 == 1 && b3 == 1)
      for(size_t k = 0; k < n; ++k)
        body(i + k, ia + k, ib + k);
    else if(a3 == 1 && b3 == 0)
      for(size_t k = 0; k < n; ++k)
        body(i + k, ia + k, ib);
    else if(a3 == 0 && b3 == 1)
      for(size_t k = 0; k < n; ++k)
        body(i + k, ia, ib + k);
    else
      for(size_t k = 0; k < n; ++k)
        body(i + k, ia + k * a3, ib + k * b3);
  }
}

// the rows of forEachBroadcast: every axis of out but the last
inline size_t broadcastRows(const Shape& out) {
  auto d = out.padded();
  return size_t(d[0]) * d[1] * d[2];
}

template <class Body>
void forEachBroadcast(const Shape& out, const Shape& a, const Shape& b, Body&& body) {
  forEachBroadcast(out, a, b, 0, broadcastRows(out), body);
}

}  // namespace cpu
}  // namespace marian
