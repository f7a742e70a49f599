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

// The one place BLAS threading is set: every CPU device is one core and computes with one BLAS
// thread (Marian's --cpu-threads), so the numbers of a configuration do not depend on how the
// process was launched (mpirun binds a rank to a core and OpenBLAS's default follows the binding)
// nor on the machine's core count, and devices never oversubscribe the cores.
void setBlasThreads(const std::vector<Device>& devices);

}  // namespace marian
