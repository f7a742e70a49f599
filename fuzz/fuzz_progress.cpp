// The training progress file (model.npz.progress.yml) and a checkpoint's special:state.yml: what
// reads must write and read back the same.
#include "fuzz_common.h"
#include "training/loop/checkpoint.h"
#include "training/loop/training_state.h"

using namespace marian;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::errorsAllowed([&] {
    TrainingState s = TrainingState::parse(text, "model.npz.progress.yml");
    std::string yaml = s.toYaml();
    FUZZ_CHECK(TrainingState::parse(yaml, "again.yml").toYaml() == yaml);
  });
  fuzz::errorsAllowed([&] {
    Checkpoint c;
    readCheckpointState(text, "model.npz.optimizer.npz", c);
  });
  fuzz::errorsAllowed([&] {  // through the file, as a resume reads it
    TrainingState::fromYaml(fuzz::writeFile("progress.yml", text));
  });
  return 0;
}
