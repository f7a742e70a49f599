// Softmax and log-softmax along the last axis, max-shifted for stability.
#include <cmath>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/cpu/log_sum_exp.h"

namespace marian {
namespace cpu {


void softmax(Tensor y, Tensor x) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  const float* in = x.f32();
  float* out = y.f32();
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      const float* xr = in + r * n;
      float* yr = out + r * n;
      float mx = rowMax(xr, n);
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for(size_t j = 0; j < n; ++j) {
        yr[j] = fastExp(xr[j] - mx);
        sum += yr[j];
      }
      float inv = 1.f / sum;
      for(size_t j = 0; j < n; ++j)
        yr[j] *= inv;
    }
  });
}

// dx_j += y_j * (dy_j - sum_k dy_k y_k)
void softmaxGrad(Tensor dx, Tensor y, Tensor dy) {
  size_t rows = y.shape.rows(), n = size_t(y.shape.back());
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      const float *yr = y.f32() + r * n, *gr = dy.f32() + r * n;
      float* dr = dx.f32() + r * n;
      float dot = 0.f;
#pragma omp simd reduction(+ : dot)
      for(size_t j = 0; j < n; ++j)
        dot += gr[j] * yr[j];
      for(size_t j = 0; j < n; ++j)
        dr[j] += yr[j] * (gr[j] - dot);
    }
  });
}

void logSoftmax(Tensor y, Tensor x) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
      for(size_t r = r0; r < r1; ++r) {
        const float* xr = x.f32() + r * n;
        float* yr = y.f32() + r * n;
        LogSumExp lse(xr, n);
        for(size_t j = 0; j < n; ++j)
          yr[j] = lse.logProb(xr[j]);
      }
  });
}

// dx_j += dy_j - softmax_j * sum_k dy_k, with softmax = exp(y)
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy) {
  size_t rows = y.shape.rows(), n = size_t(y.shape.back());
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      const float *yr = y.f32() + r * n, *gr = dy.f32() + r * n;
      float* dr = dx.f32() + r * n;
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for(size_t j = 0; j < n; ++j)
        sum += gr[j];
      for(size_t j = 0; j < n; ++j)
        dr[j] += gr[j] - fastExp(yr[j]) * sum;
    }
  });
}

}  // namespace cpu
}  // namespace marian
