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

}  // namespace marian
