#pragma once
// defines: marian::Device — which backend a tensor's memory belongs to ("cpu0", "gpu1").
#include <string>

namespace marian {

enum class DeviceType { cpu, gpu };

struct Device {
  DeviceType type = DeviceType::cpu;
  int id = 0;

  bool operator==(const Device& o) const { return type == o.type && id == o.id; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string toString() const { return (type == DeviceType::cpu ? "cpu" : "gpu") + std::to_string(id); }
};

inline Device cpuDevice(int id = 0) { return {DeviceType::cpu, id}; }
inline Device gpuDevice(int id) { return {DeviceType::gpu, id}; }

}  // namespace marian
