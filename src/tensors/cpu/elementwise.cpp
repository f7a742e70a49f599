// Element-wise CPU kernels: one templated loop per shape pattern, instantiated for every functor
// of tensors/functors.h. Equal shapes take a flat loop the compiler vectorises.
#include <algorithm>
#include <cstring>

#include "tensors/cpu/broadcast.h"
#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/counter_hash.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

void fill(Tensor t, float value) {
  float* p = t.f32();
  parallelRanges(t.size(), kParallelElements, [=](size_t b, size_t e) { std::fill(p + b, p + e, value); });
}

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
    parallelRanges(dst.size(), kParallelElements, [=](size_t b, size_t e) {
      for(size_t i = b; i < e; ++i)
        d[i] += scale * s[i];
    });
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
  visitUnary(op, p0, p1, [&](auto f) {
    parallelRanges(y.size(), kParallelElements, [=](size_t b, size_t e) {
      for(size_t i = b; i < e; ++i)
        out[i] = f.fwd(in[i]);
    });
  });
}

void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, bool accumulate, float p0, float p1) {
  float* g = dx.f32();
  const float *xs = x.f32(), *ys = y.f32(), *dys = dy.f32();
  visitUnary(op, p0, p1, [&](auto f) {
    parallelRanges(dx.size(), kParallelElements, [=](size_t b, size_t e) {
      if(accumulate)
        for(size_t i = b; i < e; ++i)
          g[i] += dys[i] * f.grad(xs[i], ys[i]);
      else
        for(size_t i = b; i < e; ++i)
          g[i] = dys[i] * f.grad(xs[i], ys[i]);
    });
  });
}

void binary(BinaryOp op, Tensor y, Tensor a, Tensor b) {
  ABORT_IF(Shape::broadcast(a.shape, b.shape).elements() != y.size(),
           "binary: {} and {} into {}", a.shape.toString(), b.shape.toString(), y.shape.toString());
  float* out = y.f32();
  const float *pa = a.f32(), *pb = b.f32();
  visitBinary(op, [&](auto f) {
    // the parts copy the pointers ([=]): through references the compiler would not vectorise
    if(a.size() == y.size() && b.size() == y.size()) {
      parallelRanges(y.size(), kParallelElements, [=](size_t begin, size_t end) {
        for(size_t i = begin; i < end; ++i)
          out[i] = f.fwd(pa[i], pb[i]);
      });
    } else {
      parallelRows(broadcastRows(y.shape), size_t(y.shape.back()), [=, &y, &a, &b](size_t begin, size_t end) {
        float* o = out;
        const float *x = pa, *z = pb;
        forEachBroadcast(y.shape, a.shape, b.shape, begin, end,
                         [&](size_t i, size_t ia, size_t ib) { o[i] = f.fwd(x[ia], z[ib]); });
      });
    }
  });
}

void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy) {
  const float *pa = a.f32(), *pb = b.f32(), *g = dy.f32();
  float* ga = da.empty() ? nullptr : da.f32();
  float* gb = db.empty() ? nullptr : db.f32();
  visitBinary(op, [&](auto f) {
    auto rows = [=, &dy, &a, &b](size_t begin, size_t end) {
      float *dA = ga, *dB = gb;
      const float *x = pa, *z = pb, *d = g;
      forEachBroadcast(dy.shape, a.shape, b.shape, begin, end, [&](size_t i, size_t ia, size_t ib) {
        if(dA)
          dA[ia] += d[i] * f.da(x[ia], z[ib]);
        if(dB)
          dB[ib] += d[i] * f.db(x[ia], z[ib]);
      });
    };
    // Broadcast inputs receive the sum over the axes they were broadcast along: in order, on one
    // thread, so that the sum does not depend on the thread count
    bool sums = (ga && a.size() != dy.size()) || (gb && b.size() != dy.size());
    if(sums)
      rows(0, broadcastRows(dy.shape));
    else
      parallelRows(broadcastRows(dy.shape), size_t(dy.shape.back()), rows);
  });
}


namespace {
// The mask's values for elements [first, first + n) (into mask), or x times them (into y, or
// added to y), with distinct buffers and the mask in locals: the hash then vectorises (through the
// closures the compiler reloads the mask after each store and hashes one value at a time, 4% of an
// update).
enum class DropoutApply { store, multiply, accumulate };
template <DropoutApply How>
void dropoutRange(float* __restrict y, const float* __restrict x, size_t n, uint64_t first, DropoutMask mask) {
  for(size_t j = 0; j < n; ++j) {
    if constexpr(How == DropoutApply::store)
      y[j] = mask.at(first + j);
    else if constexpr(How == DropoutApply::multiply)
      y[j] = x[j] * mask.at(first + j);
    else
      y[j] = mask.addTo(y[j], x[j], first + j);
  }
}
}  // namespace

void bernoulliMask(Tensor mask, float keep, uint64_t seed) {
  checks::keepProbability(keep);
  float* m = mask.f32();
  DropoutMask draw(keep, seed);
  parallelRanges(mask.size(), kParallelElements, [=](size_t b, size_t e) {
    dropoutRange<DropoutApply::store>(m + b, nullptr, e - b, b, draw);
  });
}

void dropoutMultiply(Tensor y, Tensor x, float keep, uint64_t seed, bool accumulate, Tensor maskRowOf) {
  checks::dropoutOperands(y, x, keep, maskRowOf);
  float* out = y.f32();
  const float* in = x.f32();
  DropoutMask draw(keep, seed);
  auto apply = [=](size_t at, size_t n, uint64_t first) {
    if(accumulate)
      dropoutRange<DropoutApply::accumulate>(out + at, in + at, n, first, draw);
    else
      dropoutRange<DropoutApply::multiply>(out + at, in + at, n, first, draw);
  };
  if(maskRowOf.empty()) {
    parallelRanges(y.size(), kParallelElements, [=](size_t b, size_t e) { apply(b, e - b, b); });
    return;
  }
  const int* maskRow = maskRowOf.i32();
  size_t n = x.shape.back();
  parallelRows(x.shape.rows(), n, [=](size_t b, size_t e) {
    for(size_t r = b; r < e; ++r)
      apply(r * n, n, uint64_t(maskRow[r]) * n);
  });
}

}  // namespace cpu
}  // namespace marian
