#include "training/loop/training_schedule.h"

#include <cmath>

#include "common/error.h"

namespace marian {

namespace {
// --optimizer-delay: Marian also takes fractions of a batch; here whole batches only.
size_t optimizerDelay(const Options& o) {
  float delay = o.get<float>("optimizer-delay");
  ABORT_IF(!(delay >= 1.f) || delay != std::floor(delay) || delay > 1e6f,
           "--optimizer-delay must be a whole number of mini-batches >= 1, not {}", delay);
  return size_t(delay);
}
}  // namespace

TrainingSchedule::TrainingSchedule(const Options& o)
    : display_(SchedulingParameter::parse(o.get<std::string>("disp-freq"), "disp-freq")),
      valid_(SchedulingParameter::parse(o.get<std::string>("valid-freq"), "valid-freq")),
      save_(SchedulingParameter::parse(o.get<std::string>("save-freq"), "save-freq")),
      after_(SchedulingParameter::parseList(o.get<std::string>("after"), "after")),
      displayFirst_(uint64_t(o.get<int>("disp-first"))), afterBatches_(uint64_t(o.get<int>("after-batches"))),
      afterEpochs_(size_t(o.get<int>("after-epochs"))), delay_(optimizerDelay(o)) {}

bool TrainingSchedule::due(const SchedulingParameter& f, const TrainingState& state, uint64_t labelsBefore) {
  if(!f)
    return false;
  if(f.unit == SchedulingUnit::updates)
    return state.batches % f.n == 0;
  if(f.unit == SchedulingUnit::labels)
    return labelsBefore / f.n != state.labelsTotal / f.n;
  return false;  // epochs: at the end of an epoch
}

bool TrainingSchedule::displayDue(const TrainingState& state, uint64_t labelsBefore) const {
  return due(display_, state, labelsBefore) || state.batches <= displayFirst_;
}

bool TrainingSchedule::stopsAfterUpdate(const TrainingState& state) const {
  if(afterBatches_ && state.batches >= afterBatches_)
    return true;
  for(const SchedulingParameter& a : after_)
    if(a && ((a.unit == SchedulingUnit::updates && state.batches >= a.n) ||
             (a.unit == SchedulingUnit::labels && state.labelsTotal >= a.n)))
      return true;
  return false;
}

bool TrainingSchedule::stopsAfterEpoch(size_t finished) const {
  if(afterEpochs_ && finished >= afterEpochs_)
    return true;
  for(const SchedulingParameter& a : after_)
    if(a && a.unit == SchedulingUnit::epochs && finished >= a.n)
      return true;
  return false;
}

}  // namespace marian
