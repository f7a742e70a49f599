#include "training/checkpoint.h"

#include <yaml-cpp/yaml.h>

#include <cstring>

#include "common/error.h"
#include "common/npz.h"

namespace marian {

namespace {
const std::string kExtra = "extra:", kState = "special:state.yml";

std::vector<float> floatsOf(const NpzItem& item, const std::string& path) {
  ABORT_IF(item.descr != "<f4", "Checkpoint '{}': '{}' is not float32", path, item.name);
  std::vector<float> values(item.elements());
  if(!values.empty())
    std::memcpy(values.data(), item.bytes.data(), values.size() * sizeof(float));
  return values;
}
}  // namespace

void writeCheckpoint(const std::string& path, const ModelState& m, const TrainingState& progress) {
  std::vector<NpzItem> items;
  items.push_back(npzFloat32("master_parameters", {m.values.size()}, m.values.data()));
  if(!m.smoothed.empty())
    items.push_back(npzFloat32("smoothed_parameters", {m.smoothed.size()}, m.smoothed.data()));
  for(const auto& [name, values] : m.optimizer)
    items.push_back(npzFloat32(name, {values.size()}, values.data()));
  for(const auto& [name, values] : m.extras)
    items.push_back(npzFloat32(kExtra + name, {values.size()}, values.data()));

  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "progress" << YAML::Value << YAML::Load(progress.toYaml());
  y << YAML::Key << "parameters" << YAML::Value << m.n;
  y << YAML::Key << "ranks" << YAML::Value << m.ranks;
  y << YAML::Key << "devices" << YAML::Value << m.devices;
  y << YAML::Key << "optimizer-steps" << YAML::Value << YAML::BeginSeq;
  for(const auto& [range, steps] : m.optimizerSteps)
    y << YAML::Flow << YAML::BeginSeq << range.offset << range.size << steps << YAML::EndSeq;
  y << YAML::EndSeq;
  y << YAML::Key << "counters" << YAML::Value << YAML::BeginMap;
  for(const auto& [name, value] : m.counters)
    y << YAML::Key << name << YAML::Value << value;
  y << YAML::EndMap << YAML::EndMap;
  std::string text = std::string(y.c_str()) + "\n";
  items.push_back(NpzItem{kState, {text.size()}, "|u1", std::vector<char>(text.begin(), text.end())});
  writeNpz(path, items);
}

Checkpoint readCheckpoint(const std::string& path) {
  Checkpoint c;
  std::string stateText;
  bool hasValues = false;
  for(NpzItem& item : readNpz(path)) {
    if(item.name == kState) {
      stateText.assign(item.bytes.begin(), item.bytes.end());
    } else if(item.name == "master_parameters") {
      c.model.values = floatsOf(item, path);
      hasValues = true;
    } else if(item.name == "smoothed_parameters") {
      c.model.smoothed = floatsOf(item, path);
    } else if(item.name.rfind(kExtra, 0) == 0) {
      c.model.extras[item.name.substr(kExtra.size())] = floatsOf(item, path);
    } else {
      c.model.optimizer[item.name] = floatsOf(item, path);
    }
  }
  ABORT_IF(stateText.empty() || !hasValues,
           "Checkpoint '{}' has no {}: it was written by an older version or another program and cannot be resumed "
           "exactly; start with a new --model (or pass it as a pretrained model)",
           path, stateText.empty() ? kState : "master_parameters");
  try {
    YAML::Node y = YAML::Load(stateText);
    c.progress = TrainingState::parse(YAML::Dump(y["progress"]), path);
    c.model.n = y["parameters"].as<size_t>();
    c.model.ranks = y["ranks"].as<int>();
    c.model.devices = y["devices"].as<size_t>();
    for(const YAML::Node& r : y["optimizer-steps"])
      c.model.optimizerSteps.push_back({Range{r[0].as<size_t>(), r[1].as<size_t>()}, r[2].as<uint64_t>()});
    for(auto it = y["counters"].begin(); it != y["counters"].end(); ++it)
      c.model.counters[it->first.as<std::string>()] = it->second.as<uint64_t>();
  } catch(const YAML::Exception& e) {
    ABORT("Checkpoint '{}': its {} is corrupt: {}", path, kState, e.what());
  }
  auto check = [&](const std::vector<float>& v, const std::string& name) {
    ABORT_IF(!v.empty() && v.size() != c.model.n, "Checkpoint '{}': '{}' holds {} values for a model of {}", path,
             name, v.size(), c.model.n);
  };
  check(c.model.values, "master_parameters");
  check(c.model.smoothed, "smoothed_parameters");
  for(const auto& [name, values] : c.model.optimizer)
    check(values, name);
  return c;
}

}  // namespace marian
