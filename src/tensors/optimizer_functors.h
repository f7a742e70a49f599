#pragma once
// defines: the optimizers' per-value updates (SGD, Adam, Adagrad, the moving average) as
// HOST_DEVICE functions, and Adam's bias corrections and argument checks, so that the CPU loop
// (cpu/optimizer_steps.cpp) and the CUDA kernels (gpu/optimizer_steps.cu) run one definition, as
// the element-wise operators share functors.h.
#include <cmath>
#include <cstdint>

#include "tensors/functors.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace optimizer_functors {

HOST_DEVICE inline void sgd(float& p, float g, float lr) { p -= lr * g; }

// Adam's bias corrections for step t (1-based) and the steps that changed v (a frozen variance).
struct AdamCorrections {
  float c1, c2;  // 1 / (1 - beta1^t), 1 / (1 - beta2^varianceSteps)
};
inline AdamCorrections adamCorrections(Tensor params, Tensor grads, Tensor m, Tensor v, float beta1, float beta2,
                                       uint64_t t, uint64_t varianceSteps) {
  checks::sameRange(params, grads, "adam");
  ABORT_IF(m.size() != params.size() || v.size() != params.size(), "adam: moment buffers of {} for {} parameters",
           m.size(), params.size());
  ABORT_IF(varianceSteps > t || varianceSteps == 0, "adam: a variance of {} steps at step {}", varianceSteps, t);
  return {1.f / (1.f - std::pow(beta1, float(t))), 1.f / (1.f - std::pow(beta2, float(varianceSteps)))};
}

// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2 (unless frozen);  p -= lr * (m c1) / (sqrt(v c2) + eps)
HOST_DEVICE inline void adam(float& p, float g, float& m, float& v, float lr, float beta1, float beta2, float eps,
                             AdamCorrections c, bool updateVariance) {
  m = beta1 * m + (1.f - beta1) * g;
  if(updateVariance)
    v = beta2 * v + (1.f - beta2) * g * g;
  p -= lr * (m * c.c1) / (sqrtf(v * c.c2) + eps);
}

HOST_DEVICE inline void adagrad(float& p, float g, float& s, float lr, float eps) {
  s += g * g;
  p -= lr * g / (sqrtf(s) + eps);
}

// the exponential moving average of the parameters (--exponential-smoothing)
HOST_DEVICE inline void ema(float& avg, float p, float alpha) { avg += alpha * (p - avg); }

}  // namespace optimizer_functors
}  // namespace marian
