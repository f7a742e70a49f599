// Copies between a tensor and a slab [offset, offset + len) of another along one axis: the
// forward and backward of concat, slice and split.
#include "tensors/kernel_checks.h"
#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace cpu {

namespace {
// Moves `part` (extent len along axis) to/from `whole` at offset along axis.
void slabCopy(Tensor whole, Tensor part, int axis, int offset, bool toWhole, bool accumulate) {
  auto [w, p] = checks::slab(whole, part, axis, offset);
  size_t len = p.n * p.inner;
  for(size_t o = 0; o < w.outer; ++o) {
    float* wp = whole.f32() + (o * w.n + size_t(offset)) * w.inner;
    float* pp = part.f32() + o * len;
    float* dst = toWhole ? wp : pp;
    const float* src = toWhole ? pp : wp;
    if(accumulate)
      for(size_t i = 0; i < len; ++i)
        dst[i] += src[i];
    else
      std::copy(src, src + len, dst);
  }
}
}  // namespace

void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  slabCopy(dst, src, axis, offset, /*toWhole=*/true, accumulate);
}

void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  slabCopy(src, dst, axis, offset, /*toWhole=*/false, accumulate);
}

}  // namespace cpu
}  // namespace marian
