// Parameter updates over flat ranges.
#include <cmath>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

void sgdStep(Tensor params, Tensor grads, float lr) {
  checks::sameRange(params, grads, "sgd");
  float* p = params.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      p[i] -= lr * g[i];
  });
}

// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t, uint64_t varianceSteps, bool updateVariance) {
  checks::sameRange(params, grads, "adam");
  ABORT_IF(m.size() != params.size() || v.size() != params.size(), "adam: moment buffers of {} for {} parameters",
           m.size(), params.size());
  ABORT_IF(varianceSteps > t || varianceSteps == 0, "adam: a variance of {} steps at step {}", varianceSteps, t);
  float c1 = 1.f / (1.f - std::pow(beta1, float(t)));
  float c2 = 1.f / (1.f - std::pow(beta2, float(varianceSteps)));
  float *p = params.f32(), *pm = m.f32(), *pv = v.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i) {
      pm[i] = beta1 * pm[i] + (1.f - beta1) * g[i];
      if(updateVariance)
        pv[i] = beta2 * pv[i] + (1.f - beta2) * g[i] * g[i];
      p[i] -= lr * (pm[i] * c1) / (std::sqrt(pv[i] * c2) + eps);
    }
  });
}

void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps) {
  checks::sameRange(params, grads, "adagrad");
  float *p = params.f32(), *s = gt.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i) {
      s[i] += g[i] * g[i];
      p[i] -= lr * g[i] / (std::sqrt(s[i]) + eps);
    }
  });
}

void emaStep(Tensor avg, Tensor params, float alpha) {
  checks::sameRange(params, avg, "exponential smoothing");
  float* a = avg.f32();
  const float* p = params.f32();
  parallelRanges(avg.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      a[i] += alpha * (p[i] - a[i]);
  });
}

double squaredNorm(Tensor t) {
  const float* x = t.f32();
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for(size_t i = 0; i < t.size(); ++i)
    sum += double(x[i]) * x[i];
  return sum;
}

void scale(Tensor t, float s) {
  float* x = t.f32();
  parallelRanges(t.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      x[i] *= s;
  });
}

}  // namespace cpu
}  // namespace marian
