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

// The one place a CPU device's threads are set: the cores this process may use (its affinity
// mask: all of the machine's, or those mpirun bound it to; unbound ranks on one machine share
// them) divided among its CPU devices, at least one each, so that devices never oversubscribe the
// cores and a single device uses them all. They are the device's kernel threads
// (cpu/kernel_threads.h), which also split the products, BLAS running single-threaded in each.
// MARIAN_BLAS_THREADS=N fixes the count. A product split differently (another count) agrees to
// float rounding, not bit for bit.
int blasThreadsPerDevice(const std::vector<Device>& devices);
// Ranks that are threads of this process (--ranks-in-process) share its cores as unbound ranks
// of one machine do: each device's share divides by them too (as by MARIAN_RANKS_SHARING_CORES=N,
// which scripts/simnet sets for its simulated nodes).
void shareCoresWithRanksInProcess(int ranks);
void setBlasThreads(const std::vector<Device>& devices);

}  // namespace marian
