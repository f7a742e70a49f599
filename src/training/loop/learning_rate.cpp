#include "training/loop/learning_rate.h"

#include "common/error.h"
#include "common/logging.h"
#include "training/loop/training_schedule.h"

namespace marian {

LearningRate::LearningRate(const Options& o)
    : schedule_(o.get<float>("learn-rate"), o.get<std::string>("lr-warmup"),
                o.get<std::vector<std::string>>("lr-decay-inv-sqrt"), o.get<float>("lr-warmup-start-rate")),
      factor_(o.get<float>("lr-decay")), strategy_(o.get<std::string>("lr-decay-strategy")),
      frequency_(o.get<size_t>("lr-decay-freq")), repeatWarmup_(o.get<bool>("lr-decay-repeat-warmup")),
      resetOptimizer_(o.get<bool>("lr-decay-reset-optimizer")),
      cycle_(o.get<bool>("lr-warmup-cycle")), atReload_(o.get<bool>("lr-warmup-at-reload")) {
  for(int s : o.get<std::vector<int>>("lr-decay-start"))
    start_.push_back(size_t(s));
  if(factor_ > 0.f) {
    bool two = strategy_ == "epoch+batches" || strategy_ == "epoch+stalled";
    ABORT_IF(start_.empty() || (two && start_.size() < 2),
             "--lr-decay-strategy {} needs {} of --lr-decay-start (Marian's default: 10 1), not {}", strategy_,
             two ? "two values" : "a value", start_.size());
  }
  // Marian checks a period's end by the count it is given in; an epoch's end is no such count
  ABORT_IF(cycle_ && schedule_.warmup().unit == SchedulingUnit::epochs,
           "--lr-warmup-cycle needs --lr-warmup in updates or labels (u or t), not epochs ({})",
           o.get<std::string>("lr-warmup"));
}

float LearningRate::at(const TrainingState& s) const {
  return schedule_.at(s.batches, s.labelsTotal, s.epochs, s.rateWarmupStart.n) * s.lrFactor;
}

void LearningRate::checkResumed(const TrainingState& s) const {
  ABORT_IF(schedule_.warmup() && s.warmupStart && s.warmupStart.unit != schedule_.warmup().unit,
           "The checkpoint's warm-up started again at {}, which --lr-warmup {} does not count in: give --lr-warmup in "
           "the unit the run had", s.warmupStart.str(), schedule_.warmup().str());
}

void LearningRate::restartWarmup(TrainingState& s, bool log) const {
  if(log)
    LOG(info, "Restarting learning rate warmup");
  s.warmupStart = schedule_.warmup();
  s.warmupStart.n = uint64_t(LearningRateSchedule::progress(s.warmupStart, s.batches, s.labelsTotal, s.epochs));
}

void LearningRate::decay(TrainingState& s, const std::string& when) const {
  s.lrFactor *= factor_;
  LOG(info, "Decaying learning rate to {} {}", at(s), when);
  if(resetOptimizer_)
    LOG(info, "Resetting optimizer statistics");
  if(repeatWarmup_)
    restartWarmup(s);
}

bool LearningRate::afterUpdate(TrainingState& s, uint64_t labelsBefore, bool firstOfRun) const {
  setRate(s);
  bool due = factor_ > 0.f && strategy_ == "batches" && start_[0] > 0 && frequency_ > 0 && s.batches >= start_[0] &&
             (s.batches - start_[0]) % frequency_ == 0;
  if(due)
    decay(s, "after " + std::to_string(s.batches) + " batches");
  if(firstOfRun && atReload_)
    restartWarmup(s);
  if(cycle_ && TrainingSchedule::due(schedule_.warmup(), s, labelsBefore))  // a warm-up period ended
    restartWarmup(s, /*log=*/false);
  return due;
}

bool LearningRate::afterEpoch(TrainingState& s) const {
  setRate(s);
  if(!(factor_ > 0.f))
    return false;
  bool due = false;
  if(strategy_ == "epoch" || strategy_ == "epoch+batches" || strategy_ == "epoch+stalled")
    due = start_[0] > 0 && s.epochs >= start_[0];
  if(strategy_ == "epoch+batches")
    due = due || (start_[1] > 0 && s.batches >= start_[1]);
  if(strategy_ == "epoch+stalled")
    due = due || (start_[1] > 0 && s.maxStalled >= start_[1]);
  if(due)
    decay(s, "in epoch " + std::to_string(s.epochs));
  return due;
}

bool LearningRate::afterValidation(TrainingState& s, size_t before, size_t stalled) const {
  if(stalled <= before)  // Marian's event is a stall count that grew
    return false;
  setRate(s);
  s.maxStalled = std::max(s.maxStalled, stalled);
  bool due = factor_ > 0.f && strategy_ == "stalled" && start_[0] > 0 && stalled % start_[0] == 0;
  if(due)
    decay(s, "after having stalled " + std::to_string(stalled) + " time(s)");
  return due;
}

}  // namespace marian
