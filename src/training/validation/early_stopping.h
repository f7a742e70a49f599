#pragma once
// defines: marian::EarlyStopping — what a validation's scores mean for training, as Marian's
// scheduler decides it: each metric's new best or one more stall (kept in the TrainingState, so a
// resume goes on counting), the [valid] log lines, and --early-stopping N with
// --early-stopping-on first|all|any (the first, every or some metric stalled N times in a row);
// --early-stopping-epsilon (a new best by less counts as a stall) and, on resume,
// --valid-reset-stalled and --valid-reset-all.
#include <string>
#include <vector>

#include "common/options.h"
#include "training/loop/training_state.h"

namespace marian {

class EarlyStopping {
public:
  explicit EarlyStopping(const Options& options);
  // Records one validation's scores (one per metric) and logs them; returns the metrics that
  // reached a new best.
  std::vector<std::string> record(const std::vector<double>& scores, TrainingState& state) const;
  // --valid-reset-stalled / --valid-reset-all, on a resumed state.
  void resume(TrainingState& state) const;
  // Marian's count of stalls in a row: --early-stopping-on first, the first metric's; all, the
  // least of the metrics'; any, the most (0 without validation).
  size_t stalled(const TrainingState& state) const;
  // Whether the stall counts stop training (never without validation).
  bool stops(const TrainingState& state) const;
  // The "Training stops: ..." line's reason.
  std::string reason(const TrainingState& state) const;

private:
  std::vector<std::string> metrics_;
  std::vector<float> epsilons_;  // per metric
  size_t patience_;
  bool resetStalled_, resetAll_;
  std::string on_;
};

}  // namespace marian
