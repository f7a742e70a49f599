#pragma once
// defines: cpu::forEachBroadcast — the one loop nest behind every broadcasting CPU kernel.
#include <array>

#include "tensors/shape.h"

namespace marian {
namespace cpu {

// Calls body(i, ia, ib) for every element i of `out` (row-major), where ia and ib are the
// offsets of the elements of `a` and `b` that broadcast onto it.
template <class Body>
void forEachBroadcast(const Shape& out, const Shape& a, const Shape& b, Body&& body) {
  auto d = out.padded();
  auto sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
  size_t i = 0;
  for(int i0 = 0; i0 < d[0]; ++i0)
    for(int i1 = 0; i1 < d[1]; ++i1)
      for(int i2 = 0; i2 < d[2]; ++i2) {
        size_t ia = i0 * sa[0] + i1 * sa[1] + i2 * sa[2];
        size_t ib = i0 * sb[0] + i1 * sb[1] + i2 * sb[2];
        for(int i3 = 0; i3 < d[3]; ++i3, ++i)
          body(i, ia + i3 * sa[3], ib + i3 * sb[3]);
      }
}

}  // namespace cpu
}  // namespace marian
