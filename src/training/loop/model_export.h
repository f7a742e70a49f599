#pragma once
// defines: marian::ModelExport — the files of a save: the exports for decoding and reading, then
// the checkpoint (checkpoint.h, the commit point), then MODEL.progress.yml for readers. MODEL (model.npz with its options embedded as
// special:model.yml, as Marian writes it), MODEL.iterN.npz without --overwrite, MODEL.yml (the
// effective options), MODEL.best-METRIC.npz with --keep-best, the valid-script's model; beside
// each model file its NAME.decoder.yml (what marian-decoder -c needs).
#include <string>
#include <vector>

#include "common/options.h"
#include "graph/parameters.h"
#include "optimizers/model_state.h"
#include "training/loop/training_state.h"

namespace marian {

class ModelExport {
public:
  // vocabSizes: the sizes trained with (Marian records them in the model's options)
  ModelExport(const Options& options, const Parameters& layout, std::vector<size_t> vocabSizes);
  // Every file of a save at `state` (rank 0's part of it), in that order; none when the state is
  // not finite (refuseDiverged).
  // final: the save at the end of training, without an iteration copy (as Marian's)
  void save(const ModelState& model, const TrainingState& state, bool final = false) const;
  // A model file of these flat values at `path` (written atomically).
  void writeModel(const std::string& path, const std::vector<float>& values) const;
  void writeOptions() const;  // MODEL.yml

private:
  std::string decoderConfig(const std::string& model) const;  // MODEL.decoder.yml of the model at `model`
  const Options& options_;
  const Parameters& layout_;
  std::vector<size_t> vocabSizes_;
  std::string modelPath_;
};

// An update that made the parameters (or the optimizer's state) NaN or infinite shows only at the
// next update's cost: a save or validation between the two must not write them over the last
// good checkpoint and best models. `found`: ModelState::firstNotFinite's, "" for nothing wrong;
// else an Error naming it and what is not done.
void refuseDiverged(const std::string& found, uint64_t update, const char* consequence);

}  // namespace marian
