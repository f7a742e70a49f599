#include "training/training_state.h"

#include <yaml-cpp/yaml.h>

#include "common/error.h"

namespace marian {

std::string TrainingState::toYaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "epochs" << YAML::Value << epochs;
  out << YAML::Key << "batches" << YAML::Value << batches;
  out << YAML::Key << "batches-epoch" << YAML::Value << batchesEpoch;
  out << YAML::Key << "corpus-batches-epoch" << YAML::Value << corpusBatchesEpoch;
  out << YAML::Key << "samples-epoch" << YAML::Value << samplesEpoch;
  out << YAML::Key << "labels-total" << YAML::Value << labelsTotal;
  out << YAML::Key << "seed" << YAML::Value << seed;
  out << YAML::Key << "last-validated" << YAML::Value << lastValidated;
  out << YAML::Key << "validators" << YAML::Value << YAML::BeginMap;
  for(const auto& [name, v] : validators) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "last-best" << YAML::Value << v.lastBest;
    out << YAML::Key << "has-best" << YAML::Value << v.hasBest;
    out << YAML::Key << "stalled" << YAML::Value << v.stalled;
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

TrainingState TrainingState::fromYaml(const std::string& path) {
  try {
    return parse(YAML::Dump(YAML::LoadFile(path)), path);
  } catch(const YAML::Exception& e) {
    ABORT("Training progress file '{}' is corrupt: {}", path, e.what());
  }
}

TrainingState TrainingState::parse(const std::string& yaml, const std::string& path) {
  try {
    YAML::Node y = YAML::Load(yaml);
    TrainingState s;
    s.epochs = y["epochs"].as<size_t>();
    s.batches = y["batches"].as<uint64_t>();
    s.batchesEpoch = y["batches-epoch"].as<size_t>();
    s.corpusBatchesEpoch = y["corpus-batches-epoch"] ? y["corpus-batches-epoch"].as<uint64_t>() : s.batchesEpoch;
    s.samplesEpoch = y["samples-epoch"].as<uint64_t>();
    s.labelsTotal = y["labels-total"].as<uint64_t>();
    s.seed = y["seed"].as<uint64_t>();
    s.lastValidated = y["last-validated"].as<uint64_t>();
    for(auto it = y["validators"].begin(); it != y["validators"].end(); ++it) {
      ValidatorState v;
      v.lastBest = it->second["last-best"].as<double>();
      v.hasBest = it->second["has-best"].as<bool>();
      v.stalled = it->second["stalled"].as<size_t>();
      s.validators[it->first.as<std::string>()] = v;
    }
    return s;
  } catch(const YAML::Exception& e) {
    ABORT("Training progress file '{}' is corrupt: {}", path, e.what());
  }
}

}  // namespace marian
