#include "common/task_presets.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <vector>

#include "common/error.h"
#include "common/option_table.h"

namespace marian {

namespace {

// Marian v1.12's presets (src/common/aliases.cpp), in its order: where two given presets set the
// same option, the first keeps it (CLIWrapper::updateConfig skips a key set at the same
// priority). The transformers share their training settings; base and big differ in size,
// learning rate, warm-up, Adam's beta2 and batches; pre-norm moves the norm before each block.
constexpr const char* kTransformer =
    "type: transformer\nenc-depth: 6\ndec-depth: 6\ntied-embeddings-all: true\ntransformer-postprocess: dan\n"
    "transformer-preprocess: \"\"\ntransformer-ffn-activation: relu\ntransformer-dropout: 0.1\n"
    "cost-type: ce-mean-words\nlabel-smoothing: 0.1\nclip-norm: 0\nsync-sgd: true\nexponential-smoothing: 0.0001\n"
    "max-length: 100\nmini-batch-fit: true\nmini-batch: 1000\nmaxi-batch: 1000\nbeam-size: 8\nnormalize: 1.0\n";
constexpr const char* kBase =
    "dim-emb: 512\ntransformer-dim-ffn: 2048\ntransformer-heads: 8\nlearn-rate: 0.0003\nlr-warmup: 16000\n"
    "lr-decay-inv-sqrt: [16000]\nworkspace: 9500\noptimizer-params: [0.9, 0.98, 1e-09]\nvalid-mini-batch: 16\n";
constexpr const char* kBig =
    "dim-emb: 1024\ntransformer-dim-ffn: 4096\ntransformer-heads: 16\nlearn-rate: 0.0002\nlr-warmup: 8000\n"
    "lr-decay-inv-sqrt: [8000]\nworkspace: 13000\noptimizer-params: [0.9, 0.998, 1e-09]\nvalid-mini-batch: 8\n";
constexpr const char* kPrenorm =
    "transformer-postprocess: da\ntransformer-preprocess: n\ntransformer-postprocess-top: n\n";

struct Preset {
  const char* name;
  std::vector<const char*> parts;  // applied in order
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {{"transformer-base", {kTransformer, kBase}},
                                          {"transformer-big", {kTransformer, kBig}},
                                          {"transformer-base-prenorm", {kTransformer, kBase, kPrenorm}},
                                          {"transformer-big-prenorm", {kTransformer, kBig, kPrenorm}}};
  return all;
}

}  // namespace

std::set<std::string> expandTaskPresets(YAML::Node& config, const std::set<std::string>& fromFiles,
                                        const std::set<std::string>& fromCommandLine, bool taskOnCommandLine) {
  std::set<std::string> set;
  if(!config["task"].IsDefined())
    return set;
  std::vector<std::string> tasks = config["task"].as<std::vector<std::string>>();
  config.remove("task");
  for(const Preset& preset : presets()) {
    if(std::find(tasks.begin(), tasks.end(), preset.name) == tasks.end())
      continue;
    std::map<std::string, YAML::Node> options;  // its parts in order, a later one winning (pre-norm)
    for(const char* part : preset.parts) {
      YAML::Node loaded = YAML::Load(part);
      for(auto it = loaded.begin(); it != loaded.end(); ++it)
        options[it->first.as<std::string>()] = it->second;
    }
    std::set<std::string> earlier = set;
    for(const auto& [key, value] : options) {
      if(fromCommandLine.count(key) || (!taskOnCommandLine && fromFiles.count(key)) || earlier.count(key))
        continue;  // given explicitly where it weighs as much as the preset, or more; or by an earlier one
      const option_table::Spec* spec = option_table::ownSpec(key, option_table::kTrain);
      ABORT_IF(!spec, "--task {}: its option '{}' is not one of this program's", preset.name, key);
      config[key] = option_table::typed(*spec, value, std::string(" (--task ") + preset.name + ")");
      set.insert(key);
    }
  }
  return set;
}

}  // namespace marian
