// Softmax and log-softmax along the last axis: one block per row, max-shifted.
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

template <bool Log>
__global__ void softmaxRows(float* y, const float* x, size_t rows, size_t n) {
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float mx = MaxOp::identity;
    for(size_t j = threadIdx.x; j < n; j += blockDim.x)
      mx = fmaxf(mx, xr[j]);
    mx = blockReduce(mx, MaxOp{});
    float sum = 0.f;
    for(size_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += expf(xr[j] - mx);
    sum = blockReduce(sum, SumOp{});
    if(Log) {
      float logSum = logf(sum);
      for(size_t j = threadIdx.x; j < n; j += blockDim.x)
        yr[j] = (xr[j] - mx) - logSum;
    } else {
      float inv = 1.f / sum;
      for(size_t j = threadIdx.x; j < n; j += blockDim.x)
        yr[j] = expf(xr[j] - mx) * inv;
    }
  }
}

// softmax:     dx_j += y_j * (dy_j - sum_k dy_k y_k)
// log-softmax: dx_j += dy_j - exp(y_j) * sum_k dy_k
template <bool Log>
__global__ void softmaxGradRows(float* dx, const float* y, const float* dy, size_t rows, size_t n) {
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *yr = y + r * n, *gr = dy + r * n;
    float* dr = dx + r * n;
    float s = 0.f;
    for(size_t j = threadIdx.x; j < n; j += blockDim.x)
      s += Log ? gr[j] : gr[j] * yr[j];
    s = blockReduce(s, SumOp{});
    for(size_t j = threadIdx.x; j < n; j += blockDim.x)
      dr[j] += Log ? gr[j] - expf(yr[j]) * s : yr[j] * (gr[j] - s);
  }
}

template <bool Log>
void forward(Tensor y, Tensor x) {
  size_t rows = x.shape.rows(), n = size_t(x.shape.back());
  if(rows == 0)
    return;
  softmaxRows<Log><<<rowBlocks(rows), rowThreads(n), 0, context(y).stream>>>(y.f32(), x.f32(), rows, n);
  checkLaunch();
}

template <bool Log>
void backward(Tensor dx, Tensor y, Tensor dy) {
  size_t rows = y.shape.rows(), n = size_t(y.shape.back());
  if(rows == 0)
    return;
  softmaxGradRows<Log><<<rowBlocks(rows), rowThreads(n), 0, context(dx).stream>>>(dx.f32(), y.f32(),
                                                                                dy.f32(), rows, n);
  checkLaunch();
}

}  // namespace

void softmax(Tensor y, Tensor x) { forward<false>(y, x); }
void logSoftmax(Tensor y, Tensor x) { forward<true>(y, x); }
void softmaxGrad(Tensor dx, Tensor y, Tensor dy) { backward<false>(dx, y, dy); }
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy) { backward<true>(dx, y, dy); }

}  // namespace gpu
}  // namespace marian
