#pragma once
// defines: marian::LearningRate — each update's learning rate as Marian's scheduler sets it: the
// options' schedule (--learn-rate, --lr-warmup, --lr-decay-inv-sqrt: LearningRateSchedule) times
// the decay that training's events bring (--lr-decay with --lr-decay-strategy epoch, batches,
// stalled, epoch+batches or epoch+stalled, --lr-decay-start, --lr-decay-freq), with the warm-up
// started again at a decay (--lr-decay-repeat-warmup), at each warm-up period's end
// (--lr-warmup-cycle) or after a run's first update (--lr-warmup-at-reload). What the events
// brought lives in the TrainingState (Marian's eta-factor, warmup-start, stalled-max), so a
// resume goes on with it.
#include <cstdint>
#include <string>
#include <vector>

#include "common/options.h"
#include "optimizers/lr_schedule.h"
#include "training/loop/training_state.h"

namespace marian {

class LearningRate {
public:
  explicit LearningRate(const Options& options);

  // The rate of the next update.
  float at(const TrainingState& state) const;

  // Marian's events, each after the TrainingState counted it; each returns whether it decayed the
  // rate (where resetsOptimizer(), the caller then resets the optimizers' statistics):
  // an update (labelsBefore: the labels before it; firstOfRun: this process's first update)
  bool afterUpdate(TrainingState& state, uint64_t labelsBefore, bool firstOfRun) const;
  // the start of epoch state.epochs
  bool afterEpoch(TrainingState& state) const;
  // a validation after which the metrics had stalled `stalled` times in a row (EarlyStopping::stalled),
  // where they had stalled `before` times
  bool afterValidation(TrainingState& state, size_t before, size_t stalled) const;
  // --lr-decay-reset-optimizer (with a decay)
  bool resetsOptimizer() const { return resetOptimizer_ && factor_ > 0.f; }

  // A resumed state whose warm-up started again in another unit than --lr-warmup's is an error.
  void checkResumed(const TrainingState& state) const;

  // Whether validation (rank 0's alone) can move the rate: ranks in lockstep must then take rank 0's.
  bool followsValidation() const {
    return factor_ > 0.f && ((strategy_ == "stalled" && start_[0] > 0) || (strategy_ == "epoch+stalled" && start_[1] > 0));
  }
private:
  // Marian's events set the rate first, where a warm-up started again by the last event takes effect.
  static void setRate(TrainingState& state) { state.rateWarmupStart = state.warmupStart; }
  void decay(TrainingState& state, const std::string& when) const;
  // The warm-up starts again here (Marian logs it, except at a cycle's end).
  void restartWarmup(TrainingState& state, bool log = true) const;

  LearningRateSchedule schedule_;
  float factor_;
  std::string strategy_;
  std::vector<size_t> start_;
  size_t frequency_;
  bool repeatWarmup_, resetOptimizer_, cycle_, atReload_;
};

}  // namespace marian
