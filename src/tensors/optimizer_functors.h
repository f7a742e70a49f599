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

// Adam's bias corrections for step t (1-based) and the steps that changed v (a frozen variance),
// and the ranks whose updates are averaged (local steps): with meanOver R > 1 the step divides by
// an estimate of the second moment of the mean of R ranks' gradients instead of this rank's own,
// m^2 + (v - m^2) / R (corrected moments; m^2 stands for the squared mean gradient, v - m^2 for
// its variance, which the mean of R divides by R; v where v < m^2). Averaging R steps each
// divided by its own v moves a value whose gradient is mostly noise up to sqrt(R) times less than
// one step of the averaged gradient would; this divides by what that step would: between 1 and
// sqrt(R) times Adam's own step.
struct AdamCorrections {
  float c1, c2;          // 1 / (1 - beta1^t), 1 / (1 - beta2^varianceSteps)
  float meanOver = 1.f;  // R
  float weightDecay = 0.f;  // w: Marian's 4th --optimizer-params, decoupled from the moments (AdamW)
};
inline AdamCorrections adamCorrections(Tensor params, Tensor grads, Tensor m, Tensor v, float beta1, float beta2,
                                       uint64_t t, uint64_t varianceSteps, float meanOver = 1.f,
                                       float weightDecay = 0.f) {
  checks::sameRange(params, grads, "adam");
  ABORT_IF(m.size() != params.size() || v.size() != params.size(), "adam: moment buffers of {} for {} parameters",
           m.size(), params.size());
  ABORT_IF(varianceSteps > t || varianceSteps == 0, "adam: a variance of {} steps at step {}", varianceSteps, t);
  ABORT_IF(!(meanOver >= 1.f), "adam: the variance of a mean over {} ranks", meanOver);
  return {1.f / (1.f - std::pow(beta1, float(t))), 1.f / (1.f - std::pow(beta2, float(varianceSteps))), meanOver,
          weightDecay};
}

// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2 (unless frozen);  p -= lr * ((m c1) / (sqrt(v c2) + eps) + w p)
// (v c2 replaced by the mean's second moment where c.meanOver > 1, above)
HOST_DEVICE inline void adam(float& p, float g, float& m, float& v, float lr, float beta1, float beta2, float eps,
                             AdamCorrections c, bool updateVariance) {
  m = beta1 * m + (1.f - beta1) * g;
  if(updateVariance)
    v = beta2 * v + (1.f - beta2) * g * g;
  float second = v * c.c2;
  if(c.meanOver > 1.f) {  // v less (1 - 1/R) of its variance part, none where v < m^2 (no step shorter than Adam's)
    float squaredMean = (m * c.c1) * (m * c.c1);
    second -= (1.f - 1.f / c.meanOver) * fmaxf(second - squaredMean, 0.f);
  }
  p -= lr * ((m * c.c1) / (sqrtf(second) + eps) + c.weightDecay * p);
}

HOST_DEVICE inline void adagrad(float& p, float g, float& s, float lr, float eps) {
  s += g * g;
  p -= lr * g / (sqrtf(s) + eps);
}

// the exponential moving average of the parameters (--exponential-smoothing)
HOST_DEVICE inline void ema(float& avg, float p, float alpha) { avg += alpha * (p - avg); }

}  // namespace optimizer_functors
}  // namespace marian
