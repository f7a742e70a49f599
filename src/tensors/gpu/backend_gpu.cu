// The GPU side of the backend contract: device memory, copies and one stream per device, plus
// the per-device context (stream, cuBLAS handle, scratch, error slot) that the kernels use.
#include <map>
#include <mutex>

#include "tensors/backend.h"
#include "tensors/gpu/gpu_context.h"

namespace marian {
namespace gpu {

void* Context::scratch(size_t bytes) {
  if(bytes > scratchBytes_) {
    if(scratch_)
      CUDA_CHECK(cudaFree(scratch_));  // cudaFree waits for pending work that may still use it
    scratchBytes_ = std::max(bytes, scratchBytes_ * 3 / 2);
    CUDA_CHECK(cudaMalloc(&scratch_, scratchBytes_));
  }
  return scratch_;
}

void Context::synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceError e;
  CUDA_CHECK(cudaMemcpy(&e, deviceError, sizeof e, cudaMemcpyDeviceToHost));
  if(e.code != kNoError) {
    CUDA_CHECK(cudaMemset(deviceError, 0, sizeof e));
    ABORT_IF(e.code == kRowIndexOutOfRange, "Row index {} out of range for a table of {} rows (on gpu{})",
             e.value, e.limit, id);
    ABORT_IF(e.code == kLabelOutOfRange, "crossEntropy: label {} out of range for {} classes (on gpu{})",
             e.value, e.limit, id);
    ABORT("GPU kernel error {} on gpu{}", e.code, id);
  }
}

namespace {

std::mutex contextsMutex;
std::map<int, Context*> contexts;  // owned by the backends, which live until exit

class GpuBackend : public Backend {
public:
  explicit GpuBackend(int id) {
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    ABORT_IF(rc != cudaSuccess, "GPU {} requested, but CUDA finds no usable GPU: {}", id,
             cudaGetErrorString(rc));
    ABORT_IF(id < 0 || id >= count, "GPU {} requested but {} GPU(s) are visible", id, count);
    ctx_.id = id;
    CUDA_CHECK(cudaSetDevice(id));
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ctx_.cublas));
    CUBLAS_CHECK(cublasSetStream(ctx_.cublas, ctx_.stream));
    CUDA_CHECK(cudaMalloc(&ctx_.deviceError, sizeof(DeviceError)));
    CUDA_CHECK(cudaMemset(ctx_.deviceError, 0, sizeof(DeviceError)));
    // Direct access to the other GPUs (gradient sums across devices); copies go through
    // cudaMemcpyPeer where the hardware does not allow it.
    for(int other = 0; other < count; ++other) {
      int can = 0;
      if(other != id && cudaDeviceCanAccessPeer(&can, id, other) == cudaSuccess && can)
        cudaDeviceEnablePeerAccess(other, 0);
    }
    cudaGetLastError();  // "already enabled" is not an error here
    std::lock_guard<std::mutex> lock(contextsMutex);
    contexts[id] = &ctx_;
  }
  Device device() const override { return gpuDevice(ctx_.id); }

  void* allocate(size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaSetDevice(ctx_.id));
    cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 256);
    if(rc != cudaSuccess) {
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      ABORT("Out of GPU memory on gpu{}: {} bytes requested, {} of {} bytes free ({})", ctx_.id,
            bytes, free, total, cudaGetErrorString(rc));
    }
    return p;
  }
  void release(void* ptr) override { cudaFree(ptr); }
  void copyFromHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));  // the host buffer may go away after return
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream));
    ctx_.synchronize();
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream));
  }
  void zero(void* dst, size_t bytes) override { CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, ctx_.stream)); }
  void synchronize() override { ctx_.synchronize(); }

private:
  Context ctx_;
};

}  // namespace

Context& context(int id) {
  Context* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(contextsMutex);
    auto it = contexts.find(id);
    c = it == contexts.end() ? nullptr : it->second;
  }
  if(!c) {
    backendFor(gpuDevice(id));  // creates the context
    std::lock_guard<std::mutex> lock(contextsMutex);
    c = contexts.at(id);
  }
  CUDA_CHECK(cudaSetDevice(id));
  return *c;
}

}  // namespace gpu

int cudaDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::unique_ptr<Backend> makeGpuBackend(int id) { return std::make_unique<gpu::GpuBackend>(id); }

}  // namespace marian
