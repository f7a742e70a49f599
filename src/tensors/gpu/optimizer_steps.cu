// Parameter updates over flat ranges on the GPU (a whole model or one shard; the per-value rules:
// tensors/optimizer_functors.h), the gradient norm and in-place scaling.
#include <cmath>

#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"
#include "tensors/optimizer_functors.h"

namespace marian {
namespace gpu {

namespace {

__global__ void sgdKernel(float* p, const float* g, size_t n, float lr) {
  GRID_STRIDE(i, n) optimizer_functors::sgd(p[i], g[i], lr);
}

__global__ void adamKernel(float* p, const float* g, float* m, float* v, size_t n, float lr, float beta1, float beta2,
                           float eps, optimizer_functors::AdamCorrections c, bool updateVariance) {
  GRID_STRIDE(i, n) {
    float mi = m[i], vi = v[i];  // in registers
    optimizer_functors::adam(p[i], g[i], mi, vi, lr, beta1, beta2, eps, c, updateVariance);
    m[i] = mi;
    v[i] = vi;
  }
}

__global__ void adagradKernel(float* p, const float* g, float* s, size_t n, float lr, float eps) {
  GRID_STRIDE(i, n) optimizer_functors::adagrad(p[i], g[i], s[i], lr, eps);
}

__global__ void emaKernel(float* a, const float* p, size_t n, float alpha) {
  GRID_STRIDE(i, n) optimizer_functors::ema(a[i], p[i], alpha);
}

__global__ void scaleKernel(float* x, size_t n, float s) { GRID_STRIDE(i, n) x[i] *= s; }

// Per-block partial sums of squares in double; the host adds the (few) partials in order, so
// the result does not depend on scheduling.
__global__ void squaresKernel(double* partial, const float* x, size_t n) {
  __shared__ double warpSums[kThreads / 32];
  double s = 0;
  GRID_STRIDE(i, n) s += double(x[i]) * x[i];
  for(int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  if((threadIdx.x & 31) == 0)
    warpSums[threadIdx.x >> 5] = s;
  __syncthreads();
  if(threadIdx.x == 0) {
    double t = 0;
    for(int w = 0; w < kThreads / 32; ++w)
      t += warpSums[w];
    partial[blockIdx.x] = t;
  }
}

}  // namespace

void sgdStep(Tensor params, Tensor grads, float lr) {
  checks::sameRange(params, grads, "sgd");
  sgdKernel<<<blocksFor(params.size()), kThreads, 0, context(params).stream>>>(params.f32(), grads.f32(),
                                                                               params.size(), lr);
  checkLaunch();
}

void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t, uint64_t varianceSteps, bool updateVariance, float meanOver, float weightDecay) {
  auto c = optimizer_functors::adamCorrections(params, grads, m, v, beta1, beta2, t, varianceSteps, meanOver,
                                               weightDecay);
  adamKernel<<<blocksFor(params.size()), kThreads, 0, context(params).stream>>>(
      params.f32(), grads.f32(), m.f32(), v.f32(), params.size(), lr, beta1, beta2, eps, c, updateVariance);
  checkLaunch();
}

void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps) {
  checks::sameRange(params, grads, "adagrad");
  adagradKernel<<<blocksFor(params.size()), kThreads, 0, context(params).stream>>>(
      params.f32(), grads.f32(), gt.f32(), params.size(), lr, eps);
  checkLaunch();
}

void emaStep(Tensor avg, Tensor params, float alpha) {
  checks::sameRange(params, avg, "exponential smoothing");
  emaKernel<<<blocksFor(avg.size()), kThreads, 0, context(avg).stream>>>(avg.f32(), params.f32(),
                                                                         avg.size(), alpha);
  checkLaunch();
}

double squaredNorm(Tensor t) {
  if(t.size() == 0)
    return 0.0;
  Context& c = context(t);
  unsigned blocks = std::min(blocksFor(t.size()), 1024u);
  double* partial = static_cast<double*>(c.scratch(blocks * sizeof(double)));
  squaresKernel<<<blocks, kThreads, 0, c.stream>>>(partial, t.f32(), t.size());
  checkLaunch();
  std::vector<double> host(blocks);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), partial, blocks * sizeof(double), cudaMemcpyDeviceToHost, c.stream));
  c.synchronize();
  double sum = 0;
  for(double p : host)
    sum += p;
  return sum;
}

void scale(Tensor t, float s) {
  scaleKernel<<<blocksFor(t.size()), kThreads, 0, context(t).stream>>>(t.f32(), t.size(), s);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
