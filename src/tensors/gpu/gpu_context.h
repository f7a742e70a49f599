#pragma once
// defines: gpu::Context — what every CUDA kernel of one GPU's lane needs: its stream (all work
// of a lane is ordered on it), its cuBLAS handle, growable scratch buffers and a device-side
// error slot that kernels fill instead of crashing (checked when the host next waits for it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "common/error.h"
#include "tensors/tensor.h"

#define CUDA_CHECK(expr)                                                                     \
  do {                                                                                       \
    cudaError_t rc_ = (expr);                                                                \
    ABORT_IF(rc_ != cudaSuccess, "CUDA error '{}' in {}", cudaGetErrorString(rc_), #expr);  \
  } while(0)

#define CUBLAS_CHECK(expr)                                                                   \
  do {                                                                                       \
    cublasStatus_t rc_ = (expr);                                                             \
    ABORT_IF(rc_ != CUBLAS_STATUS_SUCCESS, "cuBLAS error {} in {}", int(rc_), #expr);       \
  } while(0)

namespace marian {
namespace gpu {

// What a kernel reports through Context::deviceError: a code and the offending value.
enum KernelError : int { kNoError = 0, kRowIndexOutOfRange = 1, kLabelOutOfRange = 2 };
struct DeviceError {
  int code;
  int value;
  int limit;
};

struct Context {
  int id = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  DeviceError* deviceError = nullptr;  // device memory, zero while all is well

  // At least `bytes` of device memory, valid until the next call for the same slot (one thread
  // per lane at a time). Slot 0 holds a kernel's temporaries; slot 1 the partial sums of reductions,
  // which may read slot 0.
  void* scratch(size_t bytes, int slot = 0);
  // Waits for the stream and turns a kernel-reported error into an exception.
  void synchronize();

  void* scratch_[2] = {nullptr, nullptr};
  size_t scratchBytes_[2] = {0, 0};
};

// Each GPU has kLanes contexts, each with its own stream: lane 0 for computation, lane 1 for a
// communication thread, so that its transfers and dropping kernels overlap the computation.
constexpr int kLanes = 2;
// The lane this thread's GPU work goes to from now on (tensors/backend.h: setDeviceLane).
void setLane(int lane);
// Products on TF32 tensor cores or in FP32 on every GPU's handles (tensors/backend.h: setGpuTf32).
void setTf32(bool on);

// The context of GPU `id` on this thread's lane (created with its backend), made current.
Context& context(int id);
inline Context& context(const Tensor& t) { return context(t.device.id); }

}  // namespace gpu
}  // namespace marian
