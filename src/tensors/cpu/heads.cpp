// Attention heads of all positions from the rows of the real positions, and back: the layout
// change of multi-head attention fused with skipping padding (tensors/kernels.h).
#include <cstring>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

namespace {
// Calls f(headsOffset, rowsOffset or -1) for every (b, h, t) in the heads' memory order, the
// sentences split over the kernel threads (every element is written once).
template <class F>
void forEachHead(const checks::HeadDims& h, const int* rowOf, F f) {
  parallelRows(h.B, h.H * h.T * h.d, [&](size_t b0, size_t b1) {
    for(size_t b = b0; b < b1; ++b)
      for(size_t head = 0; head < h.H; ++head)
        for(size_t t = 0; t < h.T; ++t) {
          int r = rowOf[b * h.T + t];
          ABORT_IF(r < -1 || (r >= 0 && size_t(r) >= h.N), "Row {} of position {} out of range for {} rows", r,
                   b * h.T + t, h.N);
          size_t at = ((b * h.H + head) * h.T + t) * h.d;
          f(at, r < 0 ? std::ptrdiff_t(-1) : std::ptrdiff_t(size_t(r) * h.H * h.d + head * h.d));
        }
  });
}
}  // namespace

void headsFromRows(Tensor heads, Tensor rows, Tensor rowOf, bool accumulate) {
  checks::HeadDims h = checks::headDims(heads, rows, rowOf);
  float* out = heads.f32();
  const float* in = rows.f32();
  forEachHead(h, rowOf.i32(), [&](size_t at, std::ptrdiff_t from) {
    if(from < 0) {
      if(!accumulate)
        std::memset(out + at, 0, h.d * sizeof(float));
    } else if(accumulate) {
      for(size_t j = 0; j < h.d; ++j)
        out[at + j] += in[from + j];
    } else {
      std::memcpy(out + at, in + from, h.d * sizeof(float));
    }
  });
}

void rowsFromHeads(Tensor rows, Tensor heads, Tensor rowOf, bool accumulate) {
  checks::HeadDims h = checks::headDims(heads, rows, rowOf);
  float* out = rows.f32();
  const float* in = heads.f32();
  forEachHead(h, rowOf.i32(), [&](size_t at, std::ptrdiff_t to) {
    if(to < 0)
      return;
    if(accumulate)
      for(size_t j = 0; j < h.d; ++j)
        out[to + j] += in[at + j];
    else
      std::memcpy(out + to, in + at, h.d * sizeof(float));
  });
}

}  // namespace cpu
}  // namespace marian
