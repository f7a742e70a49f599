#pragma once
// defines: marian::LearningRateSchedule — --learn-rate with --lr-warmup (linear ramp from
// --lr-warmup-start-rate, 0 by default) and
// --lr-decay-inv-sqrt N [START] (lr * sqrt(N / (progress - START + N)) once progress passes START,
// START = N when not given), progress measured in updates, target labels or epochs as each
// option's unit says. Epochs count as Marian counts them: the current epoch's number (1-based),
// so "--lr-warmup 2e" trains epoch 1 at half the rate and "1e" warms up not at all. A warm-up
// may start again later (Marian's --lr-decay-repeat-warmup, --lr-warmup-cycle,
// --lr-warmup-at-reload: training/loop/learning_rate.h): its ramp then counts from there.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/scheduling_parameter.h"

namespace marian {

class LearningRateSchedule {
public:
  LearningRateSchedule(float base, const std::string& warmup, const std::vector<std::string>& decayInvSqrt,
                       float warmupStart = 0.f)
      : base_(base), warmupStart_(warmupStart), warmup_(SchedulingParameter::parse(warmup, "lr-warmup")),
        decay_(SchedulingParameter::parse(decayInvSqrt.empty() ? "0" : decayInvSqrt[0], "lr-decay-inv-sqrt")),
        decayStart_(decay_.n) {
    ABORT_IF(decayInvSqrt.size() > 2, "--lr-decay-inv-sqrt takes one or two values (N and where the decay starts), not {}",
             decayInvSqrt.size());
    if(decayInvSqrt.size() == 2) {
      SchedulingParameter start = SchedulingParameter::parse(decayInvSqrt[1], "lr-decay-inv-sqrt");
      ABORT_IF(start && start.unit != decay_.unit, "Both values of --lr-decay-inv-sqrt must have the same unit, not {} and {}",
               decayInvSqrt[0], decayInvSqrt[1]);
      decayStart_ = start.n;
    }
  }

  // The rate for the update after `updates` updates that saw `labels` target labels, in epoch
  // `epoch` (1-based). As in Marian, progress is what was done before this update, so a warm-up's
  // first update has the start rate (0 by default: Adam's moments take its gradient, the weights
  // stay) and update k of the warm-up k-1 Nths of the rate. warmupFrom: the progress, in the
  // warm-up's unit, where the current warm-up began.
  float at(uint64_t updates, uint64_t labels, uint64_t epoch = 1, uint64_t warmupFrom = 0) const {
    float lr = base_;
    if(warmup_) {
      double ramp = progress(warmup_, updates, labels, epoch) - double(warmupFrom);
      lr = warmupStart_ + (lr - warmupStart_) * float(std::min(1.0, std::max(0.0, ramp) / double(warmup_.n)));
    }
    if(decay_) {
      double p = progress(decay_, updates, labels, epoch);
      if(p > double(decayStart_))
        lr *= float(std::sqrt(double(decay_.n) / (p - double(decayStart_) + double(decay_.n))));
    }
    return lr;
  }

  // --lr-warmup (n 0: none)
  const SchedulingParameter& warmup() const { return warmup_; }

  // How far training is in s's unit: updates, target labels or the epoch's number.
  static double progress(const SchedulingParameter& s, uint64_t updates, uint64_t labels, uint64_t epoch) {
    switch(s.unit) {
      case SchedulingUnit::labels: return double(labels);
      case SchedulingUnit::epochs: return double(epoch);
      case SchedulingUnit::updates: break;
    }
    return double(updates);
  }

private:
  float base_, warmupStart_;
  SchedulingParameter warmup_, decay_;
  uint64_t decayStart_;
};

}  // namespace marian
