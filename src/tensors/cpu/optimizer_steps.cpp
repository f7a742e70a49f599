// Parameter updates over flat ranges (the per-value rules: tensors/optimizer_functors.h).
#include <cmath>
#include <type_traits>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"
#include "tensors/optimizer_functors.h"

namespace marian {
namespace cpu {

void sgdStep(Tensor params, Tensor grads, float lr) {
  checks::sameRange(params, grads, "sgd");
  float* p = params.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      optimizer_functors::sgd(p[i], g[i], lr);
  });
}

namespace {
// One range of Adam's update with distinct buffers and the settings in locals: the loop then
// vectorises (through the closure the compiler reloads every setting after each store and runs
// one value at a time, 7% of a bfloat16 update). Each case's loop is the same per-value rule.
void adamRange(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, size_t n,
               float lr, float beta1, float beta2, float eps, optimizer_functors::AdamCorrections c,
               bool updateVariance) {
  auto run = [&](auto updates, auto ofMean) {
    for(size_t i = 0; i < n; ++i) {
      optimizer_functors::AdamCorrections ci = c;
      if(!ofMean)
        ci.meanOver = 1.f;
      optimizer_functors::adam(p[i], g[i], m[i], v[i], lr, beta1, beta2, eps, ci, updates);
    }
  };
  using Yes = std::true_type;
  using No = std::false_type;
  bool ofMean = c.meanOver > 1.f;
  if(updateVariance)
    return ofMean ? run(Yes(), Yes()) : run(Yes(), No());
  return ofMean ? run(No(), Yes()) : run(No(), No());
}
}  // namespace

void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t, uint64_t varianceSteps, bool updateVariance, float meanOver, float weightDecay) {
  auto c = optimizer_functors::adamCorrections(params, grads, m, v, beta1, beta2, t, varianceSteps, meanOver,
                                               weightDecay);
  float *p = params.f32(), *pm = m.f32(), *pv = v.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    adamRange(p + b, g + b, pm + b, pv + b, e - b, lr, beta1, beta2, eps, c, updateVariance);
  });
}

void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps) {
  checks::sameRange(params, grads, "adagrad");
  float *p = params.f32(), *s = gt.f32();
  const float* g = grads.f32();
  parallelRanges(params.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      optimizer_functors::adagrad(p[i], g[i], s[i], lr, eps);
  });
}

void emaStep(Tensor avg, Tensor params, float alpha) {
  checks::sameRange(params, avg, "exponential smoothing");
  float* a = avg.f32();
  const float* p = params.f32();
  parallelRanges(avg.size(), kParallelElements, [=](size_t b, size_t e) {
    for(size_t i = b; i < e; ++i)
      optimizer_functors::ema(a[i], p[i], alpha);
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
