#include <cblas.h>

#include "tensors/devices_from_options.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/error.h"
#include "common/logging.h"
#include "tensors/backend.h"
#include "tensors/cpu/blas_kernels.h"
#include "tensors/cpu/kernel_threads.h"

namespace marian {

constexpr int kCpuDevicesPerCore = 8;

namespace {
std::atomic<int> ranksInProcess{1};
}

void shareCoresWithRanksInProcess(int ranks) { ranksInProcess = std::max(1, ranks); }

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

int blasThreadsPerDevice(const std::vector<Device>& devices) {
  if(const char* fixed = std::getenv("MARIAN_BLAS_THREADS")) {
    int n = std::atoi(fixed);
    ABORT_IF(n < 1, "MARIAN_BLAS_THREADS must be a positive number, not '{}'", fixed);
    return n;
  }
  // the cores this process may run on: all of the machine's, or the ones mpirun bound it to
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  int machine = int(std::max(1u, std::thread::hardware_concurrency()));
  int sharing = 1;  // unbound ranks on one machine share its cores
  if(cores >= machine)
    if(const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
      sharing = std::max(1, std::atoi(local));
  // ranks of other jobs on these cores (scripts/simnet's simulated nodes, each its own mpirun node)
  if(const char* others = std::getenv("MARIAN_RANKS_SHARING_CORES"))
    sharing = std::max(sharing, std::atoi(others));
  sharing = std::max(sharing, ranksInProcess.load());
  return std::max(1, cores / (int(devices.size()) * sharing));
}

void setBlasThreads(const std::vector<Device>& devices) {
  if(!onGpus(devices)) {
    std::string kernels = cpu::useFastestBlasKernels();  // (once: then OpenBLAS knows better)
    if(!kernels.empty())
      LOG(info, "[blas] {}", kernels);
    // BLAS itself single-threaded: the kernel threads split the products (cpu/gemm.cpp)
    openblas_set_num_threads(1);
    cpu::setKernelThreads(blasThreadsPerDevice(devices));
  }
}

}  // namespace marian
