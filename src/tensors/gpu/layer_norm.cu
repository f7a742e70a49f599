// Layer normalisation over the last axis: one block per row. The backward pass recomputes each
// row's mean and 1/std, keeps them in scratch for the gamma/beta gradients, which are column sums
// over rows (reduceAlongAxis, deterministic).
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"

namespace marian {
namespace gpu {

namespace {

struct Moments {
  float mean, rstd;
};

__device__ Moments rowMoments(const float* xr, size_t n, float eps) {
  float s = 0.f;
  for(size_t j = threadIdx.x; j < n; j += blockDim.x)
    s += xr[j];
  float mean = blockReduce(s, SumOp{}) / float(n);
  float v = 0.f;
  for(size_t j = threadIdx.x; j < n; j += blockDim.x)
    v += (xr[j] - mean) * (xr[j] - mean);
  float var = blockReduce(v, SumOp{}) / float(n);
  return {mean, rsqrtf(var + eps)};
}

__global__ void layerNormRows(float* y, const float* x, const float* gamma, const float* beta,
                              size_t rows, size_t n, float eps) {
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    Moments m = rowMoments(xr, n, eps);
    for(size_t j = threadIdx.x; j < n; j += blockDim.x) {
      float v = (xr[j] - m.mean) * m.rstd;
      yr[j] = (gamma ? gamma[j] * v : v) + (beta ? beta[j] : 0.f);
    }
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma; also writes
// dy * xhat per element into dyXhat (for dgamma) when asked.
__global__ void layerNormGradRows(float* dx, float* dyXhat, const float* x, const float* gamma,
                                  const float* dy, size_t rows, size_t n, float eps) {
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * n, *dyr = dy + r * n;
    Moments m = rowMoments(xr, n, eps);
    float sg = 0.f, sgx = 0.f;
    for(size_t j = threadIdx.x; j < n; j += blockDim.x) {
      float xhat = (xr[j] - m.mean) * m.rstd;
      float g = dyr[j] * (gamma ? gamma[j] : 1.f);
      sg += g;
      sgx += g * xhat;
      if(dyXhat)
        dyXhat[r * n + j] = dyr[j] * xhat;
    }
    float meanG = blockReduce(sg, SumOp{}) / float(n);
    float meanGX = blockReduce(sgx, SumOp{}) / float(n);
    if(!dx)
      continue;
    float* dxr = dx + r * n;
    for(size_t j = threadIdx.x; j < n; j += blockDim.x) {
      float xhat = (xr[j] - m.mean) * m.rstd;
      float g = dyr[j] * (gamma ? gamma[j] : 1.f);
      dxr[j] += m.rstd * (g - meanG - xhat * meanGX);
    }
  }
}

}  // namespace

void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  checks::layerNormShapes(gamma, beta, n);
  if(rows == 0)
    return;
  layerNormRows<<<rowBlocks(rows), rowThreads(n), 0, context(y).stream>>>(
      y.f32(), x.f32(), gamma.empty() ? nullptr : gamma.f32(), beta.empty() ? nullptr : beta.f32(),
      rows, n, eps);
  checkLaunch();
}

void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  if(rows == 0)
    return;
  Context& c = context(dy);
  float* dyXhat = dgamma.empty() ? nullptr : static_cast<float*>(c.scratch(rows * n * sizeof(float)));
  layerNormGradRows<<<rowBlocks(rows), rowThreads(n), 0, c.stream>>>(
      dx.empty() ? nullptr : dx.f32(), dyXhat, x.f32(), gamma.empty() ? nullptr : gamma.f32(),
      dy.f32(), rows, n, eps);
  checkLaunch();
  if(dyXhat)
    reduceAlongAxis(c, dgamma.f32(), dyXhat, 1, rows, n, false, 1.f, true);
  if(!dbeta.empty())
    reduceAlongAxis(c, dbeta.f32(), dy.f32(), 1, rows, n, false, 1.f, true);
}

}  // namespace gpu
}  // namespace marian
