// Layer normalisation over the last axis; backward recomputes mean and variance instead of
// storing them.
#include <cmath>
#include <vector>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

namespace {
struct Moments {
  float mean, rstd;  // rstd = 1 / sqrt(var + eps)
};

Moments moments(const float* x, size_t n, float eps) {
  float mean = 0.f;
#pragma omp simd reduction(+ : mean)
  for(size_t j = 0; j < n; ++j)
    mean += x[j];
  mean /= float(n);
  float var = 0.f;
#pragma omp simd reduction(+ : var)
  for(size_t j = 0; j < n; ++j)
    var += (x[j] - mean) * (x[j] - mean);
  var /= float(n);
  return {mean, 1.f / std::sqrt(var + eps)};
}
// dgamma and dbeta of columns [j0, j1), the rows summed in order, with distinct buffers and each
// row's moments in locals: it vectorises (through the closure, one value at a time).
template <bool Gamma, bool Beta>
void scaleShiftGrads(float* __restrict dg, float* __restrict db, const float* __restrict x, const float* __restrict dy,
                     const Moments* ms, size_t rows, size_t n, size_t j0, size_t j1) {
  for(size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * n, *dyr = dy + r * n;
    const float mean = ms[r].mean, rstd = ms[r].rstd;
    for(size_t j = j0; j < j1; ++j) {
      if constexpr(Gamma)
        dg[j] += dyr[j] * ((xr[j] - mean) * rstd);
      if constexpr(Beta)
        db[j] += dyr[j];
    }
  }
}
}  // namespace

void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  checks::layerNormShapes(gamma, beta, n);
  const float* g = gamma.empty() ? nullptr : gamma.f32();
  const float* b = beta.empty() ? nullptr : beta.f32();
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      const float* xr = x.f32() + r * n;
      float* yr = y.f32() + r * n;
      Moments m = moments(xr, n, eps);
      for(size_t j = 0; j < n; ++j) {
        float v = (xr[j] - m.mean) * m.rstd;
        yr[j] = (g ? g[j] * v : v) + (b ? b[j] : 0.f);
      }
    }
  });
}

// With xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dgamma = sum dy * xhat,  dbeta = sum dy
// dx by rows, then dgamma and dbeta by columns, each summing the rows in order.
void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  const float* gm = gamma.empty() ? nullptr : gamma.f32();
  std::vector<Moments> ms(rows);
  parallelRows(rows, n, [&](size_t r0, size_t r1) {
    for(size_t r = r0; r < r1; ++r) {
      const float *xr = x.f32() + r * n, *dyr = dy.f32() + r * n;
      Moments m = ms[r] = moments(xr, n, eps);
      if(dx.empty())
        continue;
      float meanG = 0.f, meanGX = 0.f;
      for(size_t j = 0; j < n; ++j) {
        float xhat = (xr[j] - m.mean) * m.rstd;
        float g = dyr[j] * (gm ? gm[j] : 1.f);
        meanG += g;
        meanGX += g * xhat;
      }
      meanG /= float(n);
      meanGX /= float(n);
      float* dxr = dx.f32() + r * n;
      for(size_t j = 0; j < n; ++j) {
        float xhat = (xr[j] - m.mean) * m.rstd;
        float g = dyr[j] * (gm ? gm[j] : 1.f);
        dxr[j] += m.rstd * (g - meanG - xhat * meanGX);
      }
    }
  });
  if(dgamma.empty() && dbeta.empty())
    return;
  float* dg = dgamma.empty() ? nullptr : dgamma.f32();
  float* db = dbeta.empty() ? nullptr : dbeta.f32();
  ABORT_IF(dg && dg == db, "layerNormGrad: gamma's and beta's gradients in one buffer");
  const float *xs = x.f32(), *dys = dy.f32();
  const Moments* rowMoments = ms.data();
  parallelRanges(n, kParallelElements / (rows ? rows : 1) + 1, [&](size_t j0, size_t j1) {
    if(dg && db)
      return scaleShiftGrads<true, true>(dg, db, xs, dys, rowMoments, rows, n, j0, j1);
    if(dg)
      return scaleShiftGrads<true, false>(dg, db, xs, dys, rowMoments, rows, n, j0, j1);
    scaleShiftGrads<false, true>(dg, db, xs, dys, rowMoments, rows, n, j0, j1);
  });
}

}  // namespace cpu
}  // namespace marian
