// Axis permutation of up to four axes.
#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace cpu {

void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate) {
  int rank = x.shape.rank();
  ABORT_IF(int(perm.size()) != rank, "transpose: permutation of {} axes for shape {}", perm.size(),
           x.shape.toString());
  // Strides of x, visited in y's axis order, all padded on the left to four axes.
  std::array<size_t, Shape::kMaxRank> xStride{}, xStridePerm{};
  size_t s = 1;
  for(int i = rank - 1; i >= 0; --i) {
    xStride[i] = s;
    s *= size_t(x.shape[i]);
  }
  std::array<int, Shape::kMaxRank> d;
  d.fill(1);
  int pad = Shape::kMaxRank - rank;
  for(int i = 0; i < rank; ++i) {
    d[pad + i] = x.shape[perm[i]];
    xStridePerm[pad + i] = xStride[perm[i]];
    ABORT_IF(y.shape[i] != x.shape[perm[i]], "transpose: {} cannot hold permuted {}",
             y.shape.toString(), x.shape.toString());
  }
  const float* in = x.f32();
  float* out = y.f32();
  size_t i = 0;
  for(int a = 0; a < d[0]; ++a)
    for(int b = 0; b < d[1]; ++b)
      for(int c = 0; c < d[2]; ++c) {
        const float* base = in + a * xStridePerm[0] + b * xStridePerm[1] + c * xStridePerm[2];
        size_t step = xStridePerm[3];
        if(accumulate)
          for(int e = 0; e < d[3]; ++e, ++i)
            out[i] += base[e * step];
        else
          for(int e = 0; e < d[3]; ++e, ++i)
            out[i] = base[e * step];
      }
}

}  // namespace cpu
}  // namespace marian
