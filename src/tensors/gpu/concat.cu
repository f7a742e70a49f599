// Copies between a tensor and a slab [offset, offset + len) of another along one axis: the
// forward and backward of concat, slice and split.
#include "tensors/kernel_checks.h"
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

__global__ void slabKernel(float* whole, float* part, size_t outer, size_t wholeRow, size_t len,
                           size_t start, bool toWhole, bool accumulate) {
  GRID_STRIDE(e, outer * len) {
    size_t o = e / len, r = e % len;
    float* w = whole + o * wholeRow + start + r;
    float* p = part + e;
    float* dst = toWhole ? w : p;
    float v = toWhole ? *p : *w;
    *dst = accumulate ? *dst + v : v;
  }
}

void slabCopy(Tensor whole, Tensor part, int axis, int offset, bool toWhole, bool accumulate) {
  auto [w, p] = checks::slab(whole, part, axis, offset);
  size_t len = p.n * p.inner;
  slabKernel<<<blocksFor(p.outer * len), kThreads, 0, context(whole).stream>>>(
      whole.f32(), part.f32(), w.outer, w.n * w.inner, len, size_t(offset) * w.inner, toWhole,
      accumulate);
  checkLaunch();
}

}  // namespace

void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  slabCopy(dst, src, axis, offset, /*toWhole=*/true, accumulate);
}

void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  slabCopy(src, dst, axis, offset, /*toWhole=*/false, accumulate);
}

}  // namespace gpu
}  // namespace marian
