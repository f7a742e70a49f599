#pragma once
// defines: devicesFromOptions — the devices a process trains or translates on, as Marian picks
// them: --cpu-threads N > 0 gives N CPU devices; --cpu-threads 0 gives the GPUs of --devices.
#include <vector>

#include "common/options.h"
#include "tensors/device.h"

namespace marian {

std::vector<Device> devicesFromOptions(const Options& o);

// Whether training runs on GPUs (then BLAS threading and CPU pinning do not apply).
inline bool onGpus(const std::vector<Device>& devices) {
  return !devices.empty() && devices[0].type == DeviceType::gpu;
}

// The one place BLAS threading is set, and the kernel threads with it (cpu/kernel_threads.h):
// the cores this process may use (its affinity mask: all of the machine's, or those mpirun bound
// it to; unbound ranks on one machine share them) divided among its CPU devices, at least one
// each, so that devices never oversubscribe the cores and a single device uses them all. MARIAN_BLAS_THREADS=N fixes it. OpenBLAS partitions a product
// differently for another thread count, so runs with different counts agree to float rounding,
// not bit for bit.
int blasThreadsPerDevice(const std::vector<Device>& devices);
void setBlasThreads(const std::vector<Device>& devices);

}  // namespace marian
