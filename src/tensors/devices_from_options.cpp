#include <cblas.h>

#include "tensors/devices_from_options.h"

#include <algorithm>
#include <string>
#include <thread>

#include "common/error.h"
#include "tensors/backend.h"

namespace marian {

constexpr int kCpuDevicesPerCore = 8;

std::vector<Device> devicesFromOptions(const Options& o) {
  int threads = o.get<int>("cpu-threads");
  ABORT_IF(threads < 0, "--cpu-threads {} is negative", threads);
  // Each CPU device holds its own copy of the model and gradients: a mistyped count would
  // allocate until the kernel kills the job. More devices than cores only splits the same compute.
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  ABORT_IF(threads > kCpuDevicesPerCore * cores,
           "--cpu-threads {}: this machine has {} cores; at most {} CPU devices ({} per core) are allowed", threads,
           cores, kCpuDevicesPerCore * cores, kCpuDevicesPerCore);
  std::vector<Device> devices;
  if(threads > 0) {
    for(int d = 0; d < threads; ++d)
      devices.push_back(cpuDevice(d));
    return devices;
  }
  std::vector<int> ids;
  for(const std::string& s : o.get<std::vector<std::string>>("devices")) {
    size_t used = 0;
    int id = -1;
    try {
      id = std::stoi(s, &used);
    } catch(const std::exception&) {
      used = 0;
    }
    ABORT_IF(used != s.size() || id < 0, "--devices: '{}' is not a GPU id (0, 1, ...)", s);
    for(int seen : ids)
      ABORT_IF(seen == id, "--devices lists GPU {} twice", id);
    ids.push_back(id);
  }
  ABORT_IF(ids.empty(), "--cpu-threads 0 but --devices lists no GPU");
  ABORT_IF(!gpuBackendCompiled(),
           "--cpu-threads 0 selects the GPUs of --devices, but this build has no GPU backend "
           "(configure with -DCOMPILE_CUDA=on where the CUDA toolkit is installed)");
  int visible = gpuDeviceCount();
  for(int id : ids) {
    ABORT_IF(id >= visible, "--devices {}: only {} GPU(s) are visible to this process", id, visible);
    devices.push_back(gpuDevice(id));
  }
  return devices;
}

void setBlasThreads(const std::vector<Device>& devices) {
  if(!onGpus(devices))
    openblas_set_num_threads(1);
}

}  // namespace marian
