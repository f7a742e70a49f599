#pragma once
// defines: marian::CostScaling — Marian's dynamic cost scaling (--cost-scaling FACTOR FREQUENCY
// MULTIPLIER MINIMUM; --fp16 implies Marian's default 8 10000 1 8): the cost is multiplied by the
// factor before backward, so that small gradients survive products read in float16, and the
// gradient divided by it before the optimizer. An update whose gradient is not finite is skipped
// and the factor divided by the multiplier (not below the minimum); after FREQUENCY finite updates
// in a row it is multiplied by the multiplier (while that stays finite). kSkipsMeaningDivergence
// skips in a row end training as a divergence. A checkpoint holds where the schedule stands, so
// that a resume continues it (Marian's starts again from the options' factor).
#include <cstdint>
#include <optional>
#include <string>

#include "common/options.h"
#include "optimizers/model_state.h"

namespace marian {

class CostScaling {
public:
  CostScaling(float factor, uint64_t frequency, float multiplier, float minimum);
  // From --cost-scaling (1 to 4 values; the ones left out take Marian's defaults), or --fp16's
  // default; none when neither is given. Values out of range are errors that name them.
  static std::optional<CostScaling> fromOptions(const Options& o);

  // Skipped updates in a row that mean divergence: an error, the checkpoint kept.
  static constexpr uint64_t kSkipsMeaningDivergence = 20;

  float factor() const { return factor_; }
  uint64_t skipsInARow() const { return skipsInARow_; }
  // After an update's summed gradient was checked: whether to apply it (false: skip it, the
  // gradient was not finite). Moves the factor as described above.
  bool afterGradient(bool finite);
  std::string describe() const;

  // The schedule's position into a checkpoint (extras kSavedSchedule: the factor, then the
  // options' factor, multiplier and minimum; counters: the frequency, finite and skipped updates
  // in a row). Every rank holds the same.
  void saveTo(ModelState& state) const;
  // Continues a saved schedule of the same options; one of other options (or none: saved without
  // cost scaling) leaves this one at the options' start, and says so.
  void restoreFrom(const ModelState& state);
  static constexpr const char* kSavedSchedule = "cost-scaling";

private:
  float initialFactor_;
  float factor_;
  uint64_t frequency_;
  float multiplier_, minimum_;
  uint64_t finiteInARow_ = 0, skipsInARow_ = 0;
};

}  // namespace marian
