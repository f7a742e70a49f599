#include "training/loop/model_export.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "common/error.h"
#include "common/file_util.h"
#include "common/fault_point.h"
#include "common/logging.h"
#include "common/model_config.h"
#include "common/npz.h"
#include "training/loop/checkpoint.h"

namespace marian {

ModelExport::ModelExport(const Options& options, const Parameters& layout, std::vector<size_t> vocabSizes)
    : options_(options), layout_(layout), vocabSizes_(std::move(vocabSizes)),
      modelPath_(options.get<std::string>("model")) {}

// the model keys only, bytes of type <i1 ending in a NUL, as Marian embeds them; beside it, as
// Marian writes beside every model it saves, what marian-decoder -c needs to translate with it
void ModelExport::writeModel(const std::string& path, const std::vector<float>& values) const {
  NpzWriter out(path);
  layout_.addToNpz(out, values);
  std::string yml = modelConfigYaml(options_, vocabSizes_);
  out.add("special:model.yml", {yml.size() + 1}, "<i1", yml.c_str(), yml.size() + 1);  // with its '\0'
  out.commit();
  writeFileAtomic(path + ".decoder.yml", decoderConfig(path));
}

void ModelExport::writeOptions() const { writeFileAtomic(modelPath_ + ".yml", options_.asYaml()); }

void refuseDiverged(const std::string& found, uint64_t update, const char* consequence) {
  ABORT_IF(!found.empty(),
           "The model is not finite after update {} ({}): training diverged; {}, the model folder keeps its last "
           "checkpoint (try a lower --learn-rate or --clip-norm, and check --optimizer-params)",
           update, found, consequence);
}

void ModelExport::save(const ModelState& model, const TrainingState& state, bool final) const {
  refuseDiverged(model.firstNotFinite(), state.batches, "nothing is saved");
  const std::vector<float>& exported = model.smoothed.empty() ? model.values : model.smoothed;
  writeModel(modelPath_, exported);
  faultPoint("save-" + std::to_string(state.batches), 0);  // the model written, the checkpoint not yet
  if(!options_.get<bool>("overwrite") && !final) {
    std::string iter = iterationPathOf(modelPath_, state.batches);
    writeModel(iter, exported);
    // --overwrite-checkpoint false (Marian's): each iteration keeps a full checkpoint too, so
    // training can go on from it (--model model.iterN.npz)
    if(!options_.get<bool>("overwrite-checkpoint")) {
      writeCheckpoint(checkpointPathOf(iter), model, state, modelConfigYaml(options_, vocabSizes_));
      writeFileAtomic(progressPathOf(iter), state.toYaml());
    }
  }
  writeOptions();
  writeCheckpoint(checkpointPathOf(modelPath_), model, state, modelConfigYaml(options_, vocabSizes_));
  writeFileAtomic(progressPathOf(modelPath_), state.toYaml());
  LOG(info, "Saved model to {} (update {})", modelPath_, state.batches);
}

std::string ModelExport::decoderConfig(const std::string& model) const {
  YAML::Emitter out;  // quotes paths such as "a: b #c.npz" or "[x].npz"
  out.SetDoublePrecision(6);
  out << YAML::BeginMap;
  std::vector<std::string> vocabs = options_.get<std::vector<std::string>>("vocabs");
  bool relative = options_.get<bool>("relative-paths");
  out << YAML::Key << "relative-paths" << YAML::Value << relative;
  if(relative) {  // as Marian: the files named from the model's folder, where this file is
    std::filesystem::path folder = std::filesystem::absolute(model).lexically_normal().parent_path();
    for(std::string& v : vocabs)
      v = std::filesystem::absolute(v).lexically_normal().lexically_relative(folder).string();
  }
  out << YAML::Key << "models" << YAML::Value
      << std::vector<std::string>{relative ? std::filesystem::path(model).filename().string() : model};
  out << YAML::Key << "vocabs" << YAML::Value << vocabs;
  // as Marian: the search that validation translates with, in its batches
  int batch = options_.get<int>("valid-mini-batch");
  out << YAML::Key << "beam-size" << YAML::Value << options_.get<int>("beam-size");
  out << YAML::Key << "normalize" << YAML::Value << options_.get<float>("normalize");
  out << YAML::Key << "word-penalty" << YAML::Value << options_.get<float>("word-penalty");
  out << YAML::Key << "mini-batch" << YAML::Value << batch;
  out << YAML::Key << "maxi-batch" << YAML::Value << (batch > 1 ? 100 : 1);
  out << YAML::Key << "maxi-batch-sort" << YAML::Value << (batch > 1 ? "src" : "none");
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace marian
