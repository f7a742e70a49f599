#include "training/loop/model_folder.h"

#include <filesystem>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/model_config.h"

namespace marian {

ModelFolder::ModelFolder(const std::string& modelPath) : model_(modelPath) {
  // created, as a user who names a new one expects
  std::filesystem::path folder = std::filesystem::path(model_).parent_path();
  for(auto f = folder; !f.empty() && !std::filesystem::exists(f); f = f.parent_path())
    created_.push_back(f.string());
  if(!folder.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    ABORT_IF(ec, "Cannot create the model folder '{}': {}", folder.string(), ec.message());
  }
  if(isDirectory(model_)) {
    removeIfEmpty();  // what this constructor made: the error leaves no folder behind
    ABORT("--model '{}' is a directory: give the model's file, e.g. {}/model.npz", model_, model_);
  }
}

std::string gradientOf(const Options& o) {
  return o.get<bool>("normalize-gradient") ? TrainingState::kPerLabelGradient : TrainingState::kSummedGradient;
}

std::unique_ptr<Checkpoint> ModelFolder::openCheckpoint(const Options& o) const {
  if(o.get<bool>("no-reload")) {  // Marian's: what --model names is not read, and saves overwrite it
    if(fileExists(checkpoint()) || fileExists(model_))
      LOG(warn, "[training] --no-reload: training starts afresh; its saves overwrite '{}' and its checkpoint", model_);
    return nullptr;
  }
  if(!fileExists(checkpoint())) {
    ABORT_IF(fileExists(progress()),
             "Cannot resume: '{}' exists but the checkpoint '{}' does not (remove the model folder, or give "
             "--no-reload, to start afresh)",
             progress(), checkpoint());
    // a trained model without its checkpoint (copied, or the checkpoint removed)
    ABORT_IF(fileExists(model_),
             "The model '{}' exists but its checkpoint '{}' does not, so training cannot resume it, and starting "
             "afresh would overwrite it: move it away, give another --model, or --no-reload to overwrite it",
             model_, checkpoint());
    return nullptr;
  }
  auto c = std::make_unique<Checkpoint>(readCheckpoint(checkpoint()));
  // the optimizer's state (Adam's moments, residuals) is in the units of the gradient it was
  // trained on; resumed with another, the steps would be off by about the labels per update
  bool perLabel = c->progress.gradient == TrainingState::kPerLabelGradient, normalize = o.get<bool>("normalize-gradient");
  ABORT_IF(perLabel != normalize,
           "The checkpoint '{}' was trained on the {} gradient and this run would back-propagate the {} one, which "
           "its optimizer state is not in the units of: resume {} --normalize-gradient",
           checkpoint(), perLabel ? "per-label" : "summed", normalize ? "per-label" : "summed",
           perLabel ? "with" : "without");
  if(fileExists(progress())) {
    uint64_t said = TrainingState::fromYaml(progress()).batches;
    if(said != c->progress.batches)
      LOG(warn, "[training] '{}' says update {}, the checkpoint '{}' update {}: a save was interrupted; resuming "
                "from the checkpoint",
          progress(), said, checkpoint(), c->progress.batches);
  }
  return c;
}

void ModelFolder::checkFits(const ModelState& model, const Parameters& layout) const {
  if(model.parameterLayout == layout.layoutFingerprint())
    return;
  ABORT_IF(model.n != layout.totalSize(),
           "Checkpoint '{}' holds {} parameters but the model configured has {}: were the model options changed?",
           checkpoint(), model.n, layout.totalSize());
  ABORT("Checkpoint '{}' was saved with another parameter layout (names and shapes) than the model configured: were "
        "the model options changed?",
        checkpoint());
}

void ModelFolder::checkArchitecture(const std::string& saved, const Options& options) const {
  std::string differences = architectureDifferences(saved, options);
  ABORT_IF(!differences.empty(),
           "The checkpoint '{}' was trained with another architecture: {}. Resume with the options it was trained "
           "with (-c {}.yml holds them; Marian would take the model's silently), or train a new model in another "
           "folder",
           checkpoint(), differences, model_);
}

void ModelFolder::checkTrainedOn(const TrainingState& saved, const std::string& vocabIdentity,
                                 const std::string& corpusIdentity, bool restoresPosition) const {
  ABORT_IF(saved.vocabularies != vocabIdentity,
           "The checkpoint '{}' was trained with other vocabularies than --vocabs gives (then: {}; now: {}): the "
           "model's embeddings are rows of the vocabularies it was trained with. Resume with those files, or train "
           "a new model in another folder",
           checkpoint(), saved.vocabularies, vocabIdentity);
  bool midEpoch = saved.corpusBatchesEpoch > 0 || saved.stream.ranks > 0;
  ABORT_IF(restoresPosition && midEpoch && saved.corpus != corpusIdentity,
           "The checkpoint '{}' stands {} updates into epoch {} of another corpus than --train-sets gives (then: {}; "
           "now: {}): that place is no place in this one. To go on training on this corpus, resume with "
           "--no-restore-corpus (epoch {} starts again from its first sentence); to go on where it stopped, give "
           "the corpus it was trained on",
           checkpoint(), saved.batchesEpoch, saved.epochs, saved.corpus, corpusIdentity, saved.epochs);
}

void ModelFolder::removeStaleTemporaryFiles() const {
  std::filesystem::path model(model_);
  std::string stem = std::filesystem::path(iterationStemOf(model_)).filename().string();
  marian::removeStaleTemporaryFiles(model.parent_path().string(), {model.filename().string(), stem});
}

void ModelFolder::removeIfEmpty() const {
  for(const std::string& f : created_) {
    std::error_code ec;
    if(!std::filesystem::is_empty(f, ec) || ec || !std::filesystem::remove(f, ec))
      return;
  }
}

}  // namespace marian
