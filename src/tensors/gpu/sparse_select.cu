// Gradient dropping on the GPU: the sampled threshold (sort of the sample on the device, one
// float back), moving the entries above it out of the residual (CUB's order-preserving select),
// and sparse scatter/gather. Only the selection crosses PCIe, never the dense gradient.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "tensors/backend.h"
#include "tensors/counter_hash.h"
#include "tensors/kernel_checks.h"
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

__global__ void magnitudes(float* out, const float* x, size_t n) { GRID_STRIDE(i, n) out[i] = fabsf(x[i]); }

__global__ void sampleMagnitudes(float* out, const float* x, size_t samples, size_t n, uint32_t base) {
  GRID_STRIDE(s, samples) out[s] = fabsf(x[samples == n ? s : samplePosition(base, s, samples, n)]);
}

struct AboveThreshold {
  const float* r;
  float threshold;
  __device__ bool operator()(uint32_t i) const { return fabsf(r[i]) >= threshold && r[i] != 0.f; }
};

__global__ void takeOut(float* values, float* r, const uint32_t* idx, const long long* count) {
  GRID_STRIDE(k, size_t(*count)) {
    values[k] = r[idx[k]];
    r[idx[k]] = 0.f;
  }
}

__global__ void scatterAddKernel(float* dense, const uint32_t* idx, const float* v, size_t k) {
  GRID_STRIDE(i, k) atomicAdd(dense + idx[i], v[i]);  // repeated indices add up, as on the CPU
}

__global__ void gatherAtKernel(float* v, const float* dense, const uint32_t* idx, size_t k) {
  GRID_STRIDE(i, k) v[i] = dense[idx[i]];
}

void checkIndices(const uint32_t* indices, size_t k, size_t n, const char* what) {
  for(size_t j = 0; j < k; ++j)
    ABORT_IF(indices[j] >= n, "{}: index {} out of range for {} values", what, indices[j], n);
}


// The kth entry (0-based) of |x| (or of the magnitudes at the sample positions of a range of
// sampledFrom values) in descending order: a radix sort on the device, one float back.
float kthLargest(Context& c, const float* x, size_t n, size_t kth, bool sample, uint32_t base,
                 size_t sampledFrom) {
  size_t sortBytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(nullptr, sortBytes, (const float*)nullptr,
                                                      (float*)nullptr, (long long)n));
  char* mem = static_cast<char*>(c.scratch(2 * alignedSize(n * sizeof(float)) + sortBytes));
  float* keys = reinterpret_cast<float*>(mem);
  float* sorted = reinterpret_cast<float*>(mem + alignedSize(n * sizeof(float)));
  void* temp = mem + 2 * alignedSize(n * sizeof(float));
  if(sample)
    sampleMagnitudes<<<blocksFor(n), kThreads, 0, c.stream>>>(keys, x, n, sampledFrom, base);
  else
    magnitudes<<<blocksFor(n), kThreads, 0, c.stream>>>(keys, x, n);
  checkLaunch();
  CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, sortBytes, keys, sorted, (long long)n, 0, 32,
                                                      c.stream));
  float value = 0.f;
  CUDA_CHECK(cudaMemcpyAsync(&value, sorted + kth, sizeof value, cudaMemcpyDeviceToHost, c.stream));
  c.synchronize();
  return value;
}

}  // namespace

float sampledThreshold(Tensor x, double keep, uint64_t seed) {
  size_t n = x.size();
  if(n == 0 || keep >= 1.0)
    return 0.f;
  size_t samples = sampleCount(n);
  size_t kth = std::min(samples - 1, size_t(double(samples) * keep));
  return kthLargest(context(x), x.f32(), samples, kth, /*sample=*/true, hashBase(seed), n);
}

float exactThreshold(Tensor x, size_t k) {
  size_t n = x.size();
  if(k == 0 || k >= n)
    return 0.f;
  return kthLargest(context(x), x.f32(), n, k - 1, /*sample=*/false, 0, n);
}

void takeAbove(Tensor residual, float threshold, std::vector<uint32_t>& indices,
               std::vector<float>& values) {
  size_t n = residual.size();
  checks::indexableWith32Bits(n);
  indices.clear();
  values.clear();
  if(n == 0)
    return;
  Context& c = context(residual);
  AboveThreshold above{residual.f32(), threshold};
  thrust::counting_iterator<uint32_t> all(0);
  size_t selectBytes = 0;
  CUDA_CHECK(cub::DeviceSelect::If(nullptr, selectBytes, all, (uint32_t*)nullptr, (long long*)nullptr,
                                   (long long)n, above));
  size_t listBytes = alignedSize(n * sizeof(uint32_t));
  char* base = static_cast<char*>(c.scratch(2 * listBytes + 256 + selectBytes));
  auto* idx = reinterpret_cast<uint32_t*>(base);
  auto* val = reinterpret_cast<float*>(base + listBytes);
  auto* count = reinterpret_cast<long long*>(base + 2 * listBytes);
  void* temp = base + 2 * listBytes + 256;
  CUDA_CHECK(cub::DeviceSelect::If(temp, selectBytes, all, idx, count, (long long)n, above, c.stream));
  takeOut<<<blocksFor(n / 64 + 1), kThreads, 0, c.stream>>>(val, residual.f32(), idx, count);
  checkLaunch();
  long long k = 0;
  CUDA_CHECK(cudaMemcpyAsync(&k, count, sizeof k, cudaMemcpyDeviceToHost, c.stream));
  c.synchronize();
  indices.resize(size_t(k));
  values.resize(size_t(k));
  if(k == 0)
    return;
  CUDA_CHECK(cudaMemcpyAsync(indices.data(), idx, k * sizeof(uint32_t), cudaMemcpyDeviceToHost, c.stream));
  CUDA_CHECK(cudaMemcpyAsync(values.data(), val, k * sizeof(float), cudaMemcpyDeviceToHost, c.stream));
  c.synchronize();
}

namespace {
// Scratch for k indices and k values on dense's GPU, the indices uploaded (and checked).
struct SparseScratch {
  uint32_t* idx;
  float* val;
};
SparseScratch upload(Context& c, const uint32_t* indices, size_t k, size_t n, const char* what) {
  checkIndices(indices, k, n, what);
  char* base = static_cast<char*>(c.scratch(2 * alignedSize(k * sizeof(float))));
  SparseScratch s{reinterpret_cast<uint32_t*>(base), reinterpret_cast<float*>(base + alignedSize(k * sizeof(float)))};
  CUDA_CHECK(cudaMemcpyAsync(s.idx, indices, k * sizeof(uint32_t), cudaMemcpyHostToDevice, c.stream));
  return s;
}
}  // namespace

void scatterAdd(Tensor dense, const uint32_t* indices, const float* values, size_t k) {
  if(k == 0)
    return;
  Context& c = context(dense);
  SparseScratch s = upload(c, indices, k, dense.size(), "scatterAdd");
  CUDA_CHECK(cudaMemcpyAsync(s.val, values, k * sizeof(float), cudaMemcpyHostToDevice, c.stream));
  scatterAddKernel<<<blocksFor(k), kThreads, 0, c.stream>>>(dense.f32(), s.idx, s.val, k);
  checkLaunch();
  c.synchronize();  // the host vectors may go away after return
}

void gatherAt(std::vector<float>& values, Tensor dense, const std::vector<uint32_t>& indices) {
  size_t k = indices.size();
  values.resize(k);
  if(k == 0)
    return;
  Context& c = context(dense);
  SparseScratch s = upload(c, indices.data(), k, dense.size(), "gatherAt");
  gatherAtKernel<<<blocksFor(k), kThreads, 0, c.stream>>>(s.val, dense.f32(), s.idx, k);
  checkLaunch();
  CUDA_CHECK(cudaMemcpyAsync(values.data(), s.val, k * sizeof(float), cudaMemcpyDeviceToHost, c.stream));
  c.synchronize();
}

}  // namespace gpu
}  // namespace marian
