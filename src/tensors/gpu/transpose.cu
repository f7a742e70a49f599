// Axis permutation of up to four axes: one thread per output element, reading x through the
// permuted strides.
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {
template <class I>
__global__ void transposeKernel(float* y, const float* x, Dims4 g, size_t n, bool accumulate) {
  GRID_STRIDE(i, n) {
    float v = x[operandOffset(g, I(i))];
    y[i] = accumulate ? y[i] + v : v;
  }
}
}  // namespace

void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate) {
  int rank = x.shape.rank();
  ABORT_IF(int(perm.size()) != rank, "transpose: permutation of {} axes for shape {}", perm.size(),
           x.shape.toString());
  size_t xStride[Shape::kMaxRank] = {};
  size_t s = 1;
  for(int i = rank - 1; i >= 0; --i) {
    xStride[i] = s;
    s *= size_t(x.shape[i]);
  }
  Dims4 g;  // y's dims, with the strides of x visited in y's axis order
  int pad = Shape::kMaxRank - rank;
  for(int a = 0; a < Shape::kMaxRank; ++a) {
    g.d[a] = 1;
    g.s[a] = 0;
  }
  for(int i = 0; i < rank; ++i) {
    ABORT_IF(y.shape[i] != x.shape[perm[i]], "transpose: {} cannot hold permuted {}",
             y.shape.toString(), x.shape.toString());
    g.d[pad + i] = x.shape[perm[i]];
    g.s[pad + i] = xStride[perm[i]];
  }
  const Context& c = context(y);
  if(fitsIn32Bits(y.size()))
    transposeKernel<uint32_t><<<blocksFor(y.size()), kThreads, 0, c.stream>>>(y.f32(), x.f32(), g, y.size(), accumulate);
  else
    transposeKernel<size_t><<<blocksFor(y.size()), kThreads, 0, c.stream>>>(y.f32(), x.f32(), g, y.size(), accumulate);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
