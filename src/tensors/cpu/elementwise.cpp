// Element-wise CPU kernels: one templated loop per shape pattern, instantiated for every functor
// of tensors/functors.h. Equal shapes take a flat loop the compiler vectorises.
#include <algorithm>
#include <cstring>

#include "tensors/cpu/broadcast.h"
#include "tensors/cpu/cpu_kernels.h"
#include "tensors/counter_hash.h"

namespace marian {
namespace cpu {

void fill(Tensor t, float value) { std::fill(t.f32(), t.f32() + t.size(), value); }

void copy(Tensor dst, Tensor src) {
  ABORT_IF(dst.size() != src.size() || dst.type != src.type, "copy: {} {} into {} {}",
           typeName(src.type), src.shape.toString(), typeName(dst.type), dst.shape.toString());
  std::memmove(dst.data, src.data, dst.bytes());
}

void copyUnordered(Tensor dst, Tensor src) { copy(dst, src); }

void add(Tensor dst, Tensor src, float scale) {
  float* d = dst.f32();
  const float* s = src.f32();
  if(dst.size() == src.size()) {  // same elements (reshaped views included): axpy
    for(size_t i = 0, n = dst.size(); i < n; ++i)
      d[i] += scale * s[i];
    return;
  }
  // dst broadcasts onto src: sum src over dst's broadcast axes
  forEachBroadcast(src.shape, dst.shape, src.shape,
                   [&](size_t, size_t id, size_t is) { d[id] += scale * s[is]; });
}

void unary(UnaryOp op, Tensor y, Tensor x, float p0, float p1) {
  ABORT_IF(y.size() != x.size(), "unary: {} into {}", x.shape.toString(), y.shape.toString());
  float* out = y.f32();
  const float* in = x.f32();
  size_t n = y.size();
  visitUnary(op, p0, p1, [&](auto f) {
    for(size_t i = 0; i < n; ++i)
      out[i] = f.fwd(in[i]);
  });
}

void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, float p0, float p1) {
  float* g = dx.f32();
  const float *xs = x.f32(), *ys = y.f32(), *dys = dy.f32();
  size_t n = dx.size();
  visitUnary(op, p0, p1, [&](auto f) {
    for(size_t i = 0; i < n; ++i)
      g[i] += dys[i] * f.grad(xs[i], ys[i]);
  });
}

void binary(BinaryOp op, Tensor y, Tensor a, Tensor b) {
  ABORT_IF(Shape::broadcast(a.shape, b.shape).elements() != y.size(),
           "binary: {} and {} into {}", a.shape.toString(), b.shape.toString(), y.shape.toString());
  float* out = y.f32();
  const float *pa = a.f32(), *pb = b.f32();
  visitBinary(op, [&](auto f) {
    if(a.size() == y.size() && b.size() == y.size()) {
      for(size_t i = 0, n = y.size(); i < n; ++i)
        out[i] = f.fwd(pa[i], pb[i]);
    } else {
      forEachBroadcast(y.shape, a.shape, b.shape,
                       [&](size_t i, size_t ia, size_t ib) { out[i] = f.fwd(pa[ia], pb[ib]); });
    }
  });
}

void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy) {
  const float *pa = a.f32(), *pb = b.f32(), *g = dy.f32();
  float* ga = da.empty() ? nullptr : da.f32();
  float* gb = db.empty() ? nullptr : db.f32();
  visitBinary(op, [&](auto f) {
    // Broadcast inputs receive the sum over the axes they were broadcast along.
    forEachBroadcast(dy.shape, a.shape, b.shape, [&](size_t i, size_t ia, size_t ib) {
      if(ga)
        ga[ia] += g[i] * f.da(pa[ia], pb[ib]);
      if(gb)
        gb[ib] += g[i] * f.db(pa[ia], pb[ib]);
    });
  });
}


void bernoulliMask(Tensor mask, float keep, uint64_t seed) {
  ABORT_IF(!(keep > 0.f && keep <= 1.f), "Dropout keep probability {} is not in (0, 1]", keep);
  float* m = mask.f32();
  float scale = 1.f / keep;
  uint32_t base = hashBase(seed), threshold = keepThreshold(keep);
  size_t n = mask.size();
  for(size_t i = 0; i < n; ++i)
    m[i] = counterHash(base, i) < threshold || keep == 1.f ? scale : 0.f;
}

}  // namespace cpu
}  // namespace marian
