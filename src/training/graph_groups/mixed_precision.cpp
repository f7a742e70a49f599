#include "training/graph_groups/mixed_precision.h"

#include <string>

#include "common/error.h"
#include "tensors/backend.h"

namespace marian {

ProductType productTypeFromOptions(const Options& o, const std::vector<Device>& devices) {
  auto types = o.get<std::vector<std::string>>("precision");
  bool fp16 = o.get<bool>("fp16");
  ABORT_IF(types.empty() || types.size() > 3, "--precision takes 1 to 3 types (forward/backward, optimization, saving), got {}",
           types.size());
  for(size_t i = 1; i < types.size(); ++i)
    ABORT_IF(types[i] != "float32",
             "--precision: optimization and saving run in float32 here (float32 master weights and optimizer "
             "state), got '{}' as type {}",
             types[i], i + 1);
  ProductType t = parseProductType(types[0]);
  if(fp16) {
    ABORT_IF(t == ProductType::bfloat16, "--fp16 means --precision float16 float32, but --precision says bfloat16");
    t = ProductType::float16;
  }
  for(const Device& d : devices) {
    std::string why = d.type == DeviceType::cpu ? cpuLacksProductType(t) : gpuLacksProductType(t, gpuComputeCapability(d.id));
    ABORT_IF(!why.empty(), "--precision {}{}{}: {}", productTypeName(t), fp16 ? " (--fp16)" : "",
             d.type == DeviceType::gpu ? " on gpu" + std::to_string(d.id) : "", why);
  }
  return t;
}

}  // namespace marian
