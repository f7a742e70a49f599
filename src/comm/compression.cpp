#include "comm/compression.h"

#include "tensors/kernels.h"

namespace marian {

void Compression::clipLocally(Tensor part, int ranks, double share) const {
  if(clipNorm <= 0.f)
    return;
  double norm = std::sqrt(kernels::squaredNorm(part));
  double threshold = double(clipNorm) * std::sqrt(share / double(std::max(ranks, 1)));
  if(norm > threshold)
    kernels::scale(part, float(threshold / norm));
}

}  // namespace marian
