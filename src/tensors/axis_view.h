#pragma once
// defines: AxisView — a tensor seen as [outer, axis, inner] around one axis (both backends).
#include "tensors/shape.h"

namespace marian {

struct AxisView {
  size_t outer = 1, n = 1, inner = 1;

  AxisView(const Shape& s, int axis) {
    int a = s.axis(axis);
    for(int i = 0; i < a; ++i)
      outer *= size_t(s[i]);
    n = size_t(s[a]);
    for(int i = a + 1; i < s.rank(); ++i)
      inner *= size_t(s[i]);
  }
};

}  // namespace marian
