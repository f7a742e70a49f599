// Sum, mean and max along one axis; the reduced axis stays with extent 1.
#include <limits>

#include "tensors/axis_view.h"
#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace cpu {

void reduce(ReduceOp op, Tensor y, Tensor x, int axis) {
  AxisView v(x.shape, axis);
  ABORT_IF(y.size() != v.outer * v.inner, "reduce: {} along axis {} into {}", x.shape.toString(),
           axis, y.shape.toString());
  const float* in = x.f32();
  float* out = y.f32();
  for(size_t o = 0; o < v.outer; ++o) {
    float* row = out + o * v.inner;
    const float* block = in + o * v.n * v.inner;
    if(op == ReduceOp::Max) {
      std::fill(row, row + v.inner, -std::numeric_limits<float>::infinity());
      for(size_t k = 0; k < v.n; ++k)
        for(size_t i = 0; i < v.inner; ++i)
          row[i] = std::max(row[i], block[k * v.inner + i]);
    } else {
      std::fill(row, row + v.inner, 0.f);
      for(size_t k = 0; k < v.n; ++k)
        for(size_t i = 0; i < v.inner; ++i)
          row[i] += block[k * v.inner + i];
      if(op == ReduceOp::Mean)
        for(size_t i = 0; i < v.inner; ++i)
          row[i] /= float(v.n);
    }
  }
}

void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis) {
  AxisView v(x.shape, axis);
  const float *in = x.f32(), *out = y.f32(), *g = dy.f32();
  float* gx = dx.f32();
  for(size_t o = 0; o < v.outer; ++o) {
    for(size_t i = 0; i < v.inner; ++i) {
      size_t r = o * v.inner + i;
      size_t base = o * v.n * v.inner + i;
      if(op == ReduceOp::Max) {
        // the whole gradient goes to the first maximal element
        for(size_t k = 0; k < v.n; ++k) {
          if(in[base + k * v.inner] == out[r]) {
            gx[base + k * v.inner] += g[r];
            break;
          }
        }
      } else {
        float d = op == ReduceOp::Mean ? g[r] / float(v.n) : g[r];
        for(size_t k = 0; k < v.n; ++k)
          gx[base + k * v.inner] += d;
      }
    }
  }
}

}  // namespace cpu
}  // namespace marian
