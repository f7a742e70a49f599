#include "training/loop/training_state.h"

#include <cmath>
#include <fstream>
#include <iterator>

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "common/file_util.h"
#include "training/loop/yaml_fields.h"

namespace marian {

std::string TrainingState::toYaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "epochs" << YAML::Value << epochs;
  out << YAML::Key << "batches" << YAML::Value << batches;
  out << YAML::Key << "batches-epoch" << YAML::Value << batchesEpoch;
  out << YAML::Key << "corpus-batches-epoch" << YAML::Value << corpusBatchesEpoch;
  out << YAML::Key << "corpus-sentences-epoch" << YAML::Value << corpusSentencesEpoch;
  out << YAML::Key << "batching" << YAML::Value << batching;
  if(stream.ranks) {
    out << YAML::Key << "stream" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "from" << YAML::Value << stream.from;
    out << YAML::Key << "ranks" << YAML::Value << stream.ranks;
    out << YAML::Key << "window-chunks" << YAML::Value << stream.windowChunks;
    out << YAML::Key << "chunk-lines" << YAML::Value << stream.chunkLines;
    out << YAML::Key << "windows" << YAML::Value << YAML::Flow << stream.windows;
    out << YAML::Key << "batches" << YAML::Value << YAML::Flow << stream.batches;
    out << YAML::EndMap;
  }
  out << YAML::Key << "corpus" << YAML::Value << corpus;
  out << YAML::Key << "vocabularies" << YAML::Value << vocabularies;
  out << YAML::Key << "samples-epoch" << YAML::Value << samplesEpoch;
  out << YAML::Key << "labels-total" << YAML::Value << labelsTotal;
  if(epochOver)
    out << YAML::Key << "epoch-over" << YAML::Value << true;
  if(samplesUnagreed || labelsUnagreed) {
    out << YAML::Key << "unagreed" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "samples" << YAML::Value << samplesUnagreed;
    out << YAML::Key << "labels" << YAML::Value << labelsUnagreed;
    out << YAML::EndMap;
  }
  out << YAML::Key << "seed" << YAML::Value << seed;
  out << YAML::Key << "gradient" << YAML::Value << gradient;
  out << YAML::Key << "last-validated" << YAML::Value << lastValidated;
  out << YAML::Key << "gradient-norm-avg" << YAML::Value << gradientNormAvg;
  out << YAML::Key << "eta-factor" << YAML::Value << lrFactor;
  out << YAML::Key << "warmup-start" << YAML::Value << warmupStart.str();
  out << YAML::Key << "rate-warmup-start" << YAML::Value << rateWarmupStart.str();
  out << YAML::Key << "stalled-max" << YAML::Value << maxStalled;
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
  std::string origin = "Training progress file '" + path + "'";
  ABORT_IF(isDirectory(path), "{} is a directory, not a file", origin);
  ABORT_IF(!fileExists(path), "{} does not exist", origin);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ABORT_IF(in.bad(), "{} could not be read", origin);
  return parse(text, path);
}

TrainingState TrainingState::parse(const std::string& yaml, const std::string& path) {
  std::string origin = "Training progress file '" + path + "'";
  YAML::Node y;
  try {
    y = YAML::Load(yaml);
  } catch(const YAML::Exception& e) {
    ABORT("{} is corrupt: {}", origin, e.what());
  }
  return fromNode(y, origin);
}

TrainingState TrainingState::fromNode(const YAML::Node& y, const std::string& origin) {
  using yamlfield::get;
  try {
    yamlfield::requireMap(y, origin, "");
    TrainingState s;
    s.epochs = get<size_t>(y, "epochs", origin);
    ABORT_IF(s.epochs == 0, "{}: key 'epochs' must be at least 1 (epochs count from 1), not 0", origin);
    s.batches = get<uint64_t>(y, "batches", origin);
    s.batchesEpoch = get<size_t>(y, "batches-epoch", origin);
    ABORT_IF(s.batchesEpoch > s.batches, "{}: 'batches-epoch' ({}) is more than 'batches' ({})", origin,
             s.batchesEpoch, s.batches);
    s.corpusBatchesEpoch = get<uint64_t>(y, "corpus-batches-epoch", origin);
    s.corpusSentencesEpoch = get<uint64_t>(y, "corpus-sentences-epoch", origin);
    s.batching = get<std::string>(y, "batching", origin);
    if(YAML::Node(y)["stream"]) {
      YAML::Node st = YAML::Node(y)["stream"];
      yamlfield::requireMap(st, origin, "stream");
      s.stream.from = get<uint64_t>(st, "from", origin, "stream");
      s.stream.ranks = get<uint64_t>(st, "ranks", origin, "stream");
      s.stream.windowChunks = get<uint64_t>(st, "window-chunks", origin, "stream");
      s.stream.chunkLines = get<uint64_t>(st, "chunk-lines", origin, "stream");
      for(auto [key, list] : {std::make_pair("windows", &s.stream.windows), std::make_pair("batches", &s.stream.batches)}) {
        YAML::Node seq = st[key];
        ABORT_IF(!seq.IsSequence() || seq.size() != s.stream.ranks || s.stream.ranks == 0 || s.stream.windowChunks == 0,
                 "{}: key 'stream.{}'{} must list one non-negative integer per rank ({} ranks, window-chunks {})",
                 origin, key, yamlfield::lineOf(seq), s.stream.ranks, s.stream.windowChunks);
        for(const YAML::Node& v : seq) {
          uint64_t value = 0;
          ABORT_IF(!v.IsScalar() || !YAML::convert<uint64_t>::decode(v, value) || v.Scalar().find('-') != std::string::npos,
                   "{}: key 'stream.{}'{} holds {}, not a non-negative integer", origin, key, yamlfield::lineOf(v),
                   yamlfield::describe(v));
          list->push_back(value);
        }
      }
    }
    s.corpus = get<std::string>(y, "corpus", origin);
    s.vocabularies = get<std::string>(y, "vocabularies", origin);
    s.samplesEpoch = get<uint64_t>(y, "samples-epoch", origin);
    s.labelsTotal = get<uint64_t>(y, "labels-total", origin);
    if(YAML::Node(y)["epoch-over"])
      s.epochOver = get<bool>(y, "epoch-over", origin);
    if(YAML::Node(y)["unagreed"]) {
      YAML::Node u = YAML::Node(y)["unagreed"];
      yamlfield::requireMap(u, origin, "unagreed");
      s.samplesUnagreed = get<uint64_t>(u, "samples", origin, "unagreed");
      s.labelsUnagreed = get<uint64_t>(u, "labels", origin, "unagreed");
    }
    s.seed = get<uint64_t>(y, "seed", origin);
    s.gradient = get<std::string>(y, "gradient", origin);
    ABORT_IF(s.gradient != kSummedGradient && s.gradient != kPerLabelGradient,
             "{}: key 'gradient' must be {} or {}, not '{}'", origin, kSummedGradient, kPerLabelGradient, s.gradient);
    s.lastValidated = get<uint64_t>(y, "last-validated", origin);
    s.gradientNormAvg = get<float>(y, "gradient-norm-avg", origin);  // (Marian's key)
    s.lrFactor = get<float>(y, "eta-factor", origin);  // (Marian's keys)
    ABORT_IF(!(s.lrFactor >= 0.f) || !std::isfinite(s.lrFactor), "{}: key 'eta-factor' must be a finite number >= 0, not {}",
             origin, s.lrFactor);
    for(auto [key, into] : {std::make_pair("warmup-start", &s.warmupStart), std::make_pair("rate-warmup-start", &s.rateWarmupStart)}) {
      std::string text = get<std::string>(y, key, origin);
      try {
        *into = SchedulingParameter::parse(text, key);
      } catch(const Error& e) {  // the file named with it
        ABORT("{}: {}", origin, e.what());
      }
    }
    s.maxStalled = get<size_t>(y, "stalled-max", origin);
    const YAML::Node& cy = y;
    YAML::Node validators = cy["validators"];
    if(validators.IsDefined() && !validators.IsNull()) {  // none before the first validation
      yamlfield::requireMap(validators, origin, "validators");
      for(auto it = validators.begin(); it != validators.end(); ++it) {
        std::string name = it->first.Scalar(), key = "validators." + name;
        yamlfield::requireMap(it->second, origin, key);
        ValidatorState v;
        v.lastBest = get<double>(it->second, "last-best", origin, key);
        v.hasBest = get<bool>(it->second, "has-best", origin, key);
        v.stalled = get<size_t>(it->second, "stalled", origin, key);
        s.validators[name] = v;
      }
    }
    return s;
  } catch(const YAML::Exception& e) {  // yaml-cpp's own, should a node defy the checks above
    ABORT("{} is corrupt: {}", origin, e.what());
  }
}

}  // namespace marian
