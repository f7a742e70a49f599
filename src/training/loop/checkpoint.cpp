#include "training/loop/checkpoint.h"

#include <yaml-cpp/yaml.h>

#include <cstring>

#include "common/error.h"
#include "common/npz.h"
#include "optimizers/optimizer.h"
#include "training/exchange/codec_checkpoint.h"
#include "training/loop/yaml_fields.h"

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

void writeCheckpoint(const std::string& path, const ModelState& m, const TrainingState& progress,
                     const std::string& architecture) {
  NpzWriter out(path);  // straight from the state: a checkpoint is a few copies of the model
  out.addFloat32("master_parameters", m.values);
  if(!m.smoothed.empty())
    out.addFloat32("smoothed_parameters", m.smoothed);
  for(const auto& [name, values] : m.optimizer)
    out.addFloat32(name, values);
  for(const auto& [name, values] : m.extras)
    out.addFloat32(kExtra + name, values);

  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "progress" << YAML::Value << YAML::Load(progress.toYaml());
  y << YAML::Key << "parameters" << YAML::Value << m.n;
  y << YAML::Key << "ranks" << YAML::Value << m.ranks;
  y << YAML::Key << "devices" << YAML::Value << m.devices;
  y << YAML::Key << "parameter-layout" << YAML::Value << m.parameterLayout;
  y << YAML::Key << "architecture" << YAML::Value << YAML::Load(architecture);
  y << YAML::Key << "optimizer-steps" << YAML::Value << YAML::BeginSeq;
  for(const auto& [range, steps] : m.optimizerSteps)
    y << YAML::Flow << YAML::BeginSeq << range.offset << range.size << steps << YAML::EndSeq;
  y << YAML::EndSeq;
  y << YAML::Key << "counters" << YAML::Value << YAML::BeginMap;
  for(const auto& [name, value] : m.counters)
    y << YAML::Key << name << YAML::Value << value;
  y << YAML::EndMap << YAML::EndMap;
  std::string text = std::string(y.c_str()) + "\n";
  out.add(kState, {text.size()}, "|u1", text.data(), text.size());
  out.commit();
}

void readCheckpointState(const std::string& text, const std::string& path, Checkpoint& c) {
  using yamlfield::get;
  std::string origin = "Checkpoint '" + path + "', its " + kState;
  YAML::Node y;
  try {
    y = YAML::Load(text);
  } catch(const YAML::Exception& e) {
    ABORT("{} is corrupt: {}", origin, e.what());
  }
  try {
    yamlfield::requireMap(y, origin, "");
    const YAML::Node& cy = y;
    yamlfield::requireMap(cy["progress"], origin, "progress");
    c.progress = TrainingState::fromNode(cy["progress"], origin + ", key 'progress'");
    c.model.n = get<size_t>(y, "parameters", origin);
    c.model.ranks = get<int>(y, "ranks", origin);
    ABORT_IF(c.model.ranks < 1, "{}: key 'ranks' must be at least 1, not {}", origin, c.model.ranks);
    c.model.devices = get<size_t>(y, "devices", origin);
    ABORT_IF(c.model.devices < 1, "{}: key 'devices' must be at least 1, not 0", origin);
    c.model.parameterLayout = get<std::string>(y, "parameter-layout", origin);
    yamlfield::requireMap(cy["architecture"], origin, "architecture");
    c.architecture = YAML::Dump(cy["architecture"]) + "\n";
    YAML::Node steps = cy["optimizer-steps"];
    ABORT_IF(!steps.IsDefined() || !steps.IsSequence(), "{}: key 'optimizer-steps'{} must be a list of "
             "[offset, size, steps], not {}", origin, yamlfield::lineOf(steps), yamlfield::describe(steps));
    c.model.optimizerSteps.clear();
    for(size_t i = 0; i < steps.size(); ++i) {
      const YAML::Node& r = steps[i];
      std::string name = "optimizer-steps[" + std::to_string(i) + "]";
      ABORT_IF(!r.IsSequence() || r.size() != 3, "{}: key '{}'{} must be [offset, size, steps], not {}", origin, name,
               yamlfield::lineOf(r), r.IsSequence() ? format("a list of {}", r.size()) : yamlfield::describe(r));
      Range range{yamlfield::value<size_t>(r[0], origin, name + "[0]"),
                  yamlfield::value<size_t>(r[1], origin, name + "[1]")};
      ABORT_IF(range.offset > c.model.n || range.size > c.model.n - range.offset,
               "{}: key '{}'{}: the range [{}, {} + {}) lies outside the model's {} parameters", origin, name,
               yamlfield::lineOf(r), range.offset, range.offset, range.size, c.model.n);
      c.model.optimizerSteps.push_back({range, yamlfield::value<uint64_t>(r[2], origin, name + "[2]")});
    }
    YAML::Node counters = cy["counters"];
    yamlfield::requireMap(counters, origin, "counters");
    for(auto it = counters.begin(); it != counters.end(); ++it)
      c.model.counters[it->first.Scalar()] = yamlfield::value<uint64_t>(it->second, origin, "counters." + it->first.Scalar());
  } catch(const YAML::Exception& e) {  // yaml-cpp's own, should a node defy the checks above
    ABORT("{} is corrupt: {}", origin, e.what());
  }
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
           "Checkpoint '{}' has no {}: it was written by another program (such as Marian) and cannot be resumed "
           "exactly; start with a new --model (or pass it as a pretrained model)",
           path, stateText.empty() ? kState : "master_parameters");
  readCheckpointState(stateText, path, c);
  auto check = [&](const std::vector<float>& v, const std::string& name) {
    ABORT_IF(!v.empty() && v.size() != c.model.n, "Checkpoint '{}': '{}' holds {} values for a model of {}", path,
             name, v.size(), c.model.n);
  };
  ABORT_IF(c.model.values.size() != c.model.n, "Checkpoint '{}': 'master_parameters' holds {} values for a model of {}",
           path, c.model.values.size(), c.model.n);
  check(c.model.smoothed, "smoothed_parameters");
  for(const auto& [name, values] : c.model.optimizer)
    check(values, name);
  std::string notFinite = c.model.firstNotFinite();
  ABORT_IF(!notFinite.empty(), "Checkpoint '{}' cannot be resumed: {}", path, notFinite);
  auto v = c.model.optimizer.find(Adam::kSecondMoment);  // a mean of squares
  if(v != c.model.optimizer.end())
    for(size_t i = 0; i < v->second.size(); ++i)
      ABORT_IF(v->second[i] < 0.f, "Checkpoint '{}' cannot be resumed: '{}' holds {} at index {}, where Adam keeps "
               "a mean of squares", path, v->first, v->second[i], i);
  // communication state in the global layout (the allreduce thresholds are one per piece)
  for(const auto& [name, values] : c.model.extras)
    for(const char* prefix : {"allreduce-residual.", kOneBitServerErrors, "outer-", "dropping-residual.", "server-view."})
      if(name.rfind(prefix, 0) == 0)
        check(values, kExtra + name);
  return c;
}

}  // namespace marian
