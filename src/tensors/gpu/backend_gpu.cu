// The GPU side of the backend contract: device memory, copies and one stream per device, plus
// the per-device context (stream, cuBLAS handle, scratch, error slot) that the kernels use.
#include <map>
#include <mutex>

#include "tensors/backend.h"
#include "tensors/gpu/gpu_context.h"

namespace marian {
namespace gpu {

void* Context::scratch(size_t bytes, int slot) {
  if(bytes > scratchBytes_[slot]) {
    if(scratch_[slot]) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // pending kernels may still use the old buffer
      CUDA_CHECK(cudaFree(scratch_[slot]));
    }
    scratchBytes_[slot] = std::max(bytes, scratchBytes_[slot] * 3 / 2);
    CUDA_CHECK(cudaMalloc(&scratch_[slot], scratchBytes_[slot]));
  }
  return scratch_[slot];
}

void Context::synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceError e;
  CUDA_CHECK(cudaMemcpy(&e, deviceError, sizeof e, cudaMemcpyDeviceToHost));
  if(e.code != kNoError) {
    CUDA_CHECK(cudaMemsetAsync(deviceError, 0, sizeof e, stream));
    ABORT_IF(e.code == kRowIndexOutOfRange, "Row index {} out of range for a table of {} rows (on gpu{})",
             e.value, e.limit, id);
    ABORT_IF(e.code == kLabelOutOfRange, "crossEntropy: label {} out of range for {} classes (on gpu{})",
             e.value, e.limit, id);
    ABORT("GPU kernel error {} on gpu{}", e.code, id);
  }
}

namespace {

// The device current on this thread, so that a kernel launch costs no cudaSetDevice call
// when the thread stays on one GPU (the usual case: one thread per device).
thread_local int currentDevice = -1;
void useDevice(int id) {
  if(currentDevice != id) {
    CUDA_CHECK(cudaSetDevice(id));
    currentDevice = id;
  }
}

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
    useDevice(id);
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ctx_.cublas));
    CUBLAS_CHECK(cublasSetStream(ctx_.cublas, ctx_.stream));
    CUDA_CHECK(cudaMalloc(&ctx_.deviceError, sizeof(DeviceError)));
    CUDA_CHECK(cudaMemsetAsync(ctx_.deviceError, 0, sizeof(DeviceError), ctx_.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    // Direct access between this GPU and the others this process uses, both ways (gradient
    // sums across devices); cudaMemcpyPeer copies work without it where hardware does not allow it.
    std::lock_guard<std::mutex> lock(contextsMutex);
    for(auto& [other, ctx] : contexts) {
      int can = 0;
      if(cudaDeviceCanAccessPeer(&can, id, other) == cudaSuccess && can) {
        cudaDeviceEnablePeerAccess(other, 0);
        useDevice(other);
        cudaDeviceEnablePeerAccess(id, 0);
        useDevice(id);
      }
    }
    cudaGetLastError();  // "already enabled" is not an error here
    contexts[id] = &ctx_;
  }
  Device device() const override { return gpuDevice(ctx_.id); }

  void* allocate(size_t bytes) override {
    void* p = nullptr;
    useDevice(ctx_.id);
    cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 256);
    if(rc != cudaSuccess) {
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      ABORT("Out of GPU memory on gpu{}: {} bytes requested, {} of {} bytes free ({})", ctx_.id,
            bytes, free, total, cudaGetErrorString(rc));
    }
    return p;
  }
  void release(void* ptr) override {
    useDevice(ctx_.id);
    cudaFree(ptr);
  }
  void copyFromHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));  // the host buffer may go away after return
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream));
    ctx_.synchronize();
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    useDevice(ctx_.id);
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream));
  }
  void zero(void* dst, size_t bytes) override {
    useDevice(ctx_.id);
    CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, ctx_.stream));
  }
  void synchronize() override { ctx_.synchronize(); }

private:
  Context ctx_;
};

}  // namespace

Context& context(int id) {
  constexpr int kCached = 64;
  thread_local Context* cached[kCached] = {};
  Context* c = id >= 0 && id < kCached ? cached[id] : nullptr;
  if(!c) {
    backendFor(gpuDevice(id));  // creates the context on first use
    std::lock_guard<std::mutex> lock(contextsMutex);
    c = contexts.at(id);
    if(id >= 0 && id < kCached)
      cached[id] = c;
  }
  useDevice(id);
  return *c;
}

}  // namespace gpu

int cudaDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::unique_ptr<Backend> makeGpuBackend(int id) { return std::make_unique<gpu::GpuBackend>(id); }

}  // namespace marian
