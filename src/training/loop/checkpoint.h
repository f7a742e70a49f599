#pragma once
// defines: writeCheckpoint / readCheckpoint — the one file a run resumes from,
// MODEL.optimizer.npz (Marian's name): the parameters ("master_parameters"), their moving average,
// the optimizer arrays by Marian's names, the communication state ("extra:NAME") and
// "special:state.yml" (the training progress, the layout and architecture it was saved from,
// step counts and counters). Everything a resume reads is in this file, written to a temporary
// file and renamed: it is the commit point of a checkpoint, so a kill at any moment leaves either
// the previous complete checkpoint or the new one, never a mix (model.npz and progress.yml beside
// it are exports for decoding and for reading; a resume checks progress.yml and warns if it
// differs).
#include <cstdint>
#include <string>

#include "optimizers/model_state.h"
#include "training/loop/training_state.h"

namespace marian {

struct Checkpoint {
  ModelState model;
  TrainingState progress;
  // the model's architecture options as modelConfigYaml writes them: a resume with other values
  // (another activation or layer order, which the parameters' shapes do not show) is refused
  std::string architecture;
};

// Where a run with --model MODEL keeps its checkpoint and its progress (Marian's names).
inline std::string checkpointPathOf(const std::string& model) { return model + ".optimizer.npz"; }
inline std::string progressPathOf(const std::string& model) { return model + ".progress.yml"; }
// MODEL.iterN.npz, an iteration's copy without --overwrite (MODEL without its ".npz", as Marian
// names it), and what the names of every iteration's files begin with.
inline std::string iterationStemOf(const std::string& model) {
  size_t dot = model.rfind(".npz");
  return (dot == std::string::npos ? model : model.substr(0, dot)) + ".iter";
}
inline std::string iterationPathOf(const std::string& model, uint64_t update) {
  return iterationStemOf(model) + std::to_string(update) + ".npz";
}

void writeCheckpoint(const std::string& path, const ModelState& model, const TrainingState& progress,
                     const std::string& architecture);
// Errors name the file and what is missing or malformed.
Checkpoint readCheckpoint(const std::string& path);
// Its special:state.yml text into c: the progress, the layout and architecture, the step counts
// ([offset, size, steps] within the model) and counters; errors name `path`, the key and its line.
void readCheckpointState(const std::string& text, const std::string& path, Checkpoint& c);

}  // namespace marian
