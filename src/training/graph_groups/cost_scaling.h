#pragma once
// defines: marian::CostScaling — Marian's dynamic cost scaling (--cost-scaling FACTOR FREQUENCY
// MULTIPLIER MINIMUM; --fp16 implies Marian's default 8 10000 1 8): the cost is multiplied by the
// factor before backward, so that small gradients survive products read in float16, and the
// gradient divided by it before the optimizer. An update whose gradient is not finite is skipped
// and the factor divided by the multiplier (not below the minimum); after FREQUENCY finite updates
// in a row it is multiplied by the multiplier.
#include <cstdint>
#include <optional>
#include <string>

#include "common/options.h"

namespace marian {

class CostScaling {
public:
  CostScaling(float factor, uint64_t frequency, float multiplier, float minimum);
  // From --cost-scaling (1 to 4 values; the ones left out take Marian's defaults), or --fp16's
  // default; none when neither is given. Values out of range are errors that name them.
  static std::optional<CostScaling> fromOptions(const Options& o);

  float factor() const { return factor_; }
  // After an update's summed gradient was checked: whether to apply it (false: skip it, the
  // gradient was not finite). Moves the factor as described above.
  bool afterGradient(bool finite);
  std::string describe() const;

private:
  float factor_;
  uint64_t frequency_;
  float multiplier_, minimum_;
  uint64_t finiteInARow_ = 0;
};

}  // namespace marian
