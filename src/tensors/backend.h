#pragma once
// defines: marian::Backend — the small per-device contract (memory, copies, sync). Kernels are
// free functions in tensors/kernels.h that choose the CPU or GPU implementation by device.
#include <cstddef>
#include <memory>
#include <string>

#include "tensors/device.h"

namespace marian {

// A point in one device's work: another device (or lane) can wait for it without the host
// waiting. Only GPUs have them: CPU work is done when its call returns.
class DeviceEvent {
public:
  virtual ~DeviceEvent() = default;
};

// What every allocation is aligned to (cudaMalloc's): arenas and scratch split blocks at multiples
// of it, so every sub-allocation is as aligned on every device (cache lines, AVX-512 loads, GPU
// transactions).
constexpr size_t kAllocationAlignment = 256;
inline size_t alignedSize(size_t bytes) {
  return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

class Backend {
public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual void* allocate(size_t bytes) = 0;  // aligned to kAllocationAlignment
  virtual void release(void* ptr) = 0;
  virtual void copyFromHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void copyToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;  // within this device
  virtual void zero(void* dst, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // Events (null and no-ops on the CPU): record marks the work issued so far on this thread's
  // lane of this device; wait makes later work on this thread's lane of this device wait for a
  // marked point, which may belong to another device.
  virtual std::unique_ptr<DeviceEvent> createEvent() { return nullptr; }
  virtual void record(DeviceEvent* event) {}
  virtual void wait(DeviceEvent* event) {}
};

// The backend of a device, created on first use and alive until exit. Thread-safe.
Backend& backendFor(Device device);

// Whether this build has the GPU backend.
bool gpuBackendCompiled();
// GPU work issued by this thread goes to stream `lane` of each GPU from now on: 0 (the default)
// for computation, 1 for a communication thread, whose transfers and dropping kernels then
// overlap the computation instead of queueing behind it. Work on two lanes is unordered: the
// caller synchronises (Backend::synchronize on each lane) before one lane uses the other's
// results. No effect on CPU devices.
void setDeviceLane(int lane);
// GPU matrix products from now on on TF32 tensor cores (inputs rounded to 10 mantissa bits, sums
// in FP32: PyTorch's allow_tf32), or, by default, in full FP32 like the CPU. No effect on CPUs.
// Changes every GPU's cuBLAS handles: call it while no other thread uses them (at start-up).
void setGpuTf32(bool on);

// GPUs visible to this process (0 without the GPU backend, a driver or a device).
int gpuDeviceCount();
// GPU id's compute capability as major * 10 + minor (90 for an H100); 0 where unknown (no GPU
// backend, driver or such a device).
int gpuComputeCapability(int id);
// GPU id's PCI bus id ("0000:1a:00.0"): the same GPU whatever CUDA_VISIBLE_DEVICES numbers it;
// "" where unknown.
std::string gpuBusId(int id);

}  // namespace marian
