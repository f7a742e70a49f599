#include "tensors/backend.h"

#include <map>
#include <mutex>

#include "common/error.h"

namespace marian {

std::unique_ptr<Backend> makeCpuBackend(int id);
#ifdef MARIAN_CUDA
std::unique_ptr<Backend> makeGpuBackend(int id);
int cudaDeviceCount();
int cudaComputeCapability(int id);
std::string cudaBusId(int id);
namespace gpu {
void setLane(int lane);
void setTf32(bool on);
}
#endif

bool gpuBackendCompiled() {
#ifdef MARIAN_CUDA
  return true;
#else
  return false;
#endif
}

void setDeviceLane(int lane) {
#ifdef MARIAN_CUDA
  gpu::setLane(lane);
#else
  ABORT_IF(lane < 0 || lane > 1, "Device lane {} does not exist (0: compute, 1: communication)", lane);
#endif
}

void setGpuTf32(bool on) {
#ifdef MARIAN_CUDA
  gpu::setTf32(on);
#else
  (void)on;
#endif
}

int gpuDeviceCount() {
#ifdef MARIAN_CUDA
  return cudaDeviceCount();
#else
  return 0;
#endif
}

std::string gpuBusId(int id) {
#ifdef MARIAN_CUDA
  return cudaBusId(id);
#else
  (void)id;
  return "";
#endif
}

int gpuComputeCapability(int id) {
#ifdef MARIAN_CUDA
  return cudaComputeCapability(id);
#else
  (void)id;
  return 0;
#endif
}

Backend& backendFor(Device device) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::unique_ptr<Backend>> backends;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = backends[{int(device.type), device.id}];
  if(!slot) {
    if(device.type == DeviceType::cpu) {
      slot = makeCpuBackend(device.id);
    } else {
#ifdef MARIAN_CUDA
      slot = makeGpuBackend(device.id);
#else
      ABORT("Device {} requested, but this build has no GPU backend (configure with "
            "-DCOMPILE_CUDA=on on a machine with the CUDA toolkit)",
            device.toString());
#endif
    }
  }
  return *slot;
}

}  // namespace marian
