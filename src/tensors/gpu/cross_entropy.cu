// Cross-entropy from logits with label smoothing and a padding mask, fused with log-softmax:
// one block per row, the [rows, vocab] probabilities are never stored.
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"

namespace marian {
namespace gpu {

namespace {

struct RowStats {
  float max, logSum, sum;  // sum of the logits, for the smoothing term
};

__device__ RowStats rowStats(const float* xr, size_t n) {
  float mx = MaxOp::identity;
  for(size_t j = threadIdx.x; j < n; j += blockDim.x)
    mx = fmaxf(mx, xr[j]);
  mx = blockReduce(mx, MaxOp{});
  float e = 0.f, s = 0.f;
  for(size_t j = threadIdx.x; j < n; j += blockDim.x) {
    e += expf(xr[j] - mx);
    s += xr[j];
  }
  e = blockReduce(e, SumOp{});
  s = blockReduce(s, SumOp{});
  return {mx, logf(e), s};
}

__global__ void crossEntropyRows(float* loss, const float* logits, const int* labels,
                                 const float* mask, size_t rows, size_t n, float smoothing,
                                 DeviceError* error) {
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float m = mask ? mask[r] : 1.f;
    if(m == 0.f) {
      if(threadIdx.x == 0)
        loss[r] = 0.f;
      continue;
    }
    int label = labels[r];
    if(label < 0 || size_t(label) >= n) {
      if(threadIdx.x == 0) {
        reportError(error, kLabelOutOfRange, label, int(n));
        loss[r] = 0.f;
      }
      continue;
    }
    const float* xr = logits + r * n;
    RowStats s = rowStats(xr, n);
    if(threadIdx.x == 0) {
      float nll = -((xr[label] - s.max) - s.logSum);
      float mean = s.max + s.logSum - s.sum / float(n);
      loss[r] = m * ((1.f - smoothing) * nll + (smoothing != 0.f ? smoothing * mean : 0.f));
    }
  }
}

// dlogits_j (+)= dloss * mask * (softmax_j - q_j), q = (1-eps) onehot(label) + eps/n
__global__ void crossEntropyGradRows(float* dlogits, const float* logits, const int* labels,
                                     const float* mask, const float* dloss, size_t rows, size_t n,
                                     float smoothing, bool accumulate, DeviceError* error) {
  float uniform = smoothing / float(n);
  for(size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float g = dloss[r] * (mask ? mask[r] : 1.f);
    int label = labels[r];
    float* dr = dlogits + r * n;
    if(g == 0.f) {
      if(!accumulate)
        for(size_t j = threadIdx.x; j < n; j += blockDim.x)
          dr[j] = 0.f;
      continue;
    }
    if(label < 0 || size_t(label) >= n) {
      if(threadIdx.x == 0)
        reportError(error, kLabelOutOfRange, label, int(n));
      continue;
    }
    const float* xr = logits + r * n;
    RowStats s = rowStats(xr, n);
    for(size_t j = threadIdx.x; j < n; j += blockDim.x) {
      float p = expf((xr[j] - s.max) - s.logSum);
      float d = g * (p - uniform - (j == size_t(label) ? 1.f - smoothing : 0.f));
      dr[j] = accumulate ? dr[j] + d : d;
    }
  }
}

}  // namespace

void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing) {
  size_t rows = logits.shape.rows(), n = size_t(logits.shape.back());
  checks::crossEntropyShapes(logits, labels, mask, rows);
  if(rows == 0)
    return;
  const Context& c = context(loss);
  crossEntropyRows<<<rowBlocks(rows), rowThreads(n), 0, c.stream>>>(
      loss.f32(), logits.f32(), labels.i32(), mask.empty() ? nullptr : mask.f32(), rows, n,
      smoothing, c.deviceError);
  checkLaunch();
}

void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss, bool accumulate) {
  size_t rows = logits.shape.rows(), n = size_t(logits.shape.back());
  checks::crossEntropyShapes(logits, labels, mask, rows);
  if(rows == 0)
    return;
  const Context& c = context(dlogits);
  crossEntropyGradRows<<<rowBlocks(rows), rowThreads(n), 0, c.stream>>>(
      dlogits.f32(), logits.f32(), labels.i32(), mask.empty() ? nullptr : mask.f32(), dloss.f32(),
      rows, n, smoothing, accumulate, c.deviceError);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
