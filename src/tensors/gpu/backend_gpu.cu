// The GPU side of the backend contract: device memory, copies and one stream per device.
// Kernels for the operators come with the GPU issue; this makes Device{gpu, N} allocatable.
#include <cuda_runtime.h>

#include "common/error.h"
#include "tensors/backend.h"

namespace marian {
namespace {

#define CUDA_CHECK(expr)                                                                     \
  do {                                                                                       \
    cudaError_t rc_ = (expr);                                                                \
    ABORT_IF(rc_ != cudaSuccess, "CUDA error '{}' in {}", cudaGetErrorString(rc_), #expr);  \
  } while(0)

class GpuBackend : public Backend {
public:
  explicit GpuBackend(int id) : id_(id) {
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    ABORT_IF(rc != cudaSuccess, "GPU {} requested, but CUDA finds no usable GPU: {}", id,
             cudaGetErrorString(rc));
    ABORT_IF(id < 0 || id >= count, "GPU {} requested but {} GPU(s) are visible", id, count);
    CUDA_CHECK(cudaSetDevice(id_));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  Device device() const override { return gpuDevice(id_); }

  void* allocate(size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaSetDevice(id_));
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 256));
    return p;
  }
  void release(void* ptr) override { cudaFree(ptr); }
  void copyFromHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void zero(void* dst, size_t bytes) override { CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_)); }
  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
  int id_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> makeGpuBackend(int id) { return std::make_unique<GpuBackend>(id); }

}  // namespace marian
