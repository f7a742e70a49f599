#pragma once
// defines: marian::LearningRateSchedule — --learn-rate with --lr-warmup (linear ramp) and
// --lr-decay-inv-sqrt (lr * sqrt(n / progress) once progress passes n), progress measured in
// updates or target labels as the option's unit says.
#include <cmath>
#include <string>
#include <vector>

#include "common/scheduling_parameter.h"

namespace marian {

class LearningRateSchedule {
public:
  LearningRateSchedule(float base, const std::string& warmup, const std::vector<std::string>& decayInvSqrt)
      : base_(base), warmup_(SchedulingParameter::parse(warmup, "lr-warmup")),
        decay_(SchedulingParameter::parse(decayInvSqrt.empty() ? "0" : decayInvSqrt[0], "lr-decay-inv-sqrt")) {
    ABORT_IF(warmup_.unit == SchedulingUnit::epochs || decay_.unit == SchedulingUnit::epochs,
             "--lr-warmup and --lr-decay-inv-sqrt take updates (u) or labels (t), not epochs");
  }

  // The rate for the update after `updates` updates that saw `labels` target labels.
  float at(uint64_t updates, uint64_t labels) const {
    float lr = base_;
    if(warmup_) {
      double progress = double(warmup_.unit == SchedulingUnit::labels ? labels : updates + 1);
      lr *= float(std::min(1.0, progress / double(warmup_.n)));
    }
    if(decay_) {
      double progress = double(decay_.unit == SchedulingUnit::labels ? labels : updates + 1);
      lr *= float(std::sqrt(double(decay_.n) / std::max(progress, double(decay_.n))));
    }
    return lr;
  }

private:
  float base_;
  SchedulingParameter warmup_, decay_;
};

}  // namespace marian
