#pragma once
// defines: marian::ModelFolder — where a run keeps its files (--model MODEL): the folder created
// when new (and removed again, if still empty, by a run that fails), and what a start finds there:
// a checkpoint to resume (checked against this run), nothing, or files that make either unsafe.
#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "graph/parameters.h"
#include "training/loop/checkpoint.h"

namespace marian {

class ModelFolder {
public:
  // Errors when --model names a directory or the folder cannot be made.
  explicit ModelFolder(const std::string& modelPath);
  const std::string& model() const { return model_; }
  std::string checkpoint() const { return checkpointPathOf(model_); }
  std::string progress() const { return progressPathOf(model_); }
  // The checkpoint this run resumes (null: it starts afresh). Errors name what makes the folder
  // unsafe: a progress file or a model without its checkpoint (a fresh start would overwrite it),
  // a checkpoint of the other gradient (--normalize-gradient).
  std::unique_ptr<Checkpoint> openCheckpoint(const Options& options) const;
  // Errors unless the checkpoint's parameters are the configured model's (names and shapes),
  // naming the two sizes where they differ.
  void checkFits(const ModelState& model, const Parameters& layout) const;
  // Errors unless the checkpoint's training state `saved` was trained with the vocabularies this
  // run loaded and, when the run goes on from its place in an epoch (restoresPosition), on this
  // corpus: identities as TrainingData gives them, each error naming both and the way out.
  void checkTrainedOn(const TrainingState& saved, const std::string& vocabIdentity, const std::string& corpusIdentity,
                      bool restoresPosition) const;
  // Errors unless `options` give the architecture the checkpoint was saved with (`saved`, its
  // Checkpoint::architecture), naming every option that differs.
  void checkArchitecture(const std::string& saved, const Options& options) const;
  // The temporary files an interrupted save left of this model, its checkpoint, its iteration
  // models and their checkpoints, its best models (a killed writer's only).
  void removeStaleTemporaryFiles() const;
  // A failed run leaves no empty folder of its own making behind.
  void removeIfEmpty() const;

private:
  std::string model_;
  std::vector<std::string> created_;  // by this run, the innermost first
};

// What --normalize-gradient makes the back-propagated gradient (TrainingState::gradient).
std::string gradientOf(const Options& options);

}  // namespace marian
