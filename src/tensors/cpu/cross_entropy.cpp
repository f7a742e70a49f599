// Cross-entropy from logits with label smoothing and a padding mask, fused with log-softmax so
// that the [rows, vocab] probabilities are never stored.
#include <algorithm>
#include <cmath>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/cpu/log_sum_exp.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {


void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing) {
  size_t rows = logits.shape.rows(), n = size_t(logits.shape.back());
  checks::crossEntropyShapes(logits, labels, mask, rows);
  const int* y = labels.i32();
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      float m = mask.empty() ? 1.f : mask.f32()[r];
      if(m == 0.f) {
        loss.f32()[r] = 0.f;
        continue;
      }
      const float* xr = logits.f32() + r * n;
      checks::labelInRange(y[r], n);
      LogSumExp s(xr, n);
      float nll = -s.logProb(xr[y[r]]);
      float mean = 0.f;  // mean over classes of -log p
      if(smoothing != 0.f) {
#pragma omp simd reduction(+ : mean)
        for(size_t j = 0; j < n; ++j)
          mean += xr[j];
        mean = s.max + s.logSum - mean / float(n);
      }
      loss.f32()[r] = m * ((1.f - smoothing) * nll + smoothing * mean);
    }
  });
}

// dlogits_j (+)= dloss * mask * (softmax_j - q_j), q = (1-eps) onehot(label) + eps/n
void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss, bool accumulate) {
  size_t rows = logits.shape.rows(), n = size_t(logits.shape.back());
  checks::crossEntropyShapes(logits, labels, mask, rows);
  const int* y = labels.i32();
  float uniform = smoothing / float(n);
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      float g = dloss.f32()[r] * (mask.empty() ? 1.f : mask.f32()[r]);
      float* dr = dlogits.f32() + r * n;
      if(g == 0.f) {
        if(!accumulate)
          std::fill(dr, dr + n, 0.f);
        continue;
      }
      checks::labelInRange(y[r], n);
      const float* xr = logits.f32() + r * n;
      if(accumulate) {
        LogSumExp s(xr, n);
        for(size_t j = 0; j < n; ++j)
          dr[j] += g * (fastExp(s.logProb(xr[j])) - uniform);
      } else {  // the row's exponentials go where their gradient goes: one exp a logit, not two
        float mx = rowMax(xr, n), sum = 0.f;
#pragma omp simd reduction(+ : sum)
        for(size_t j = 0; j < n; ++j) {
          dr[j] = fastExp(xr[j] - mx);
          sum += dr[j];
        }
        float scale = g / sum, shift = g * uniform;
        for(size_t j = 0; j < n; ++j)
          dr[j] = dr[j] * scale - shift;
      }
      dr[y[r]] -= g * (1.f - smoothing);
    }
  });
}

}  // namespace cpu
}  // namespace marian
