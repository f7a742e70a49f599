#pragma once
// defines: marian::TrainingSchedule — when training displays, validates, saves and stops, as
// Marian's scheduler decides it: --disp-freq (and --disp-first), --valid-freq, --save-freq in
// updates, labels ("10000t") or epochs ("1e"); --after-batches, --after-epochs and --after;
// and --optimizer-delay (mini-batches per update). Read once from the options.
#include <cstdint>
#include <vector>

#include "common/options.h"
#include "common/scheduling_parameter.h"
#include "training/loop/training_state.h"

namespace marian {

class TrainingSchedule {
public:
  explicit TrainingSchedule(const Options& options);

  size_t delay() const { return delay_; }  // mini-batches per update
  // After the update that took the labels from labelsBefore to state.labelsTotal:
  bool displayDue(const TrainingState& state, uint64_t labelsBefore) const;
  bool validationDue(const TrainingState& state, uint64_t labelsBefore) const { return due(valid_, state, labelsBefore); }
  bool saveDue(const TrainingState& state, uint64_t labelsBefore) const { return due(save_, state, labelsBefore); }
  // At the end of epoch `finished`:
  bool displayDueAtEpoch(size_t finished) const { return dueAtEpoch(display_, finished); }
  bool validationDueAtEpoch(size_t finished) const { return dueAtEpoch(valid_, finished); }
  bool saveDueAtEpoch(size_t finished) const { return dueAtEpoch(save_, finished); }
  bool stopsAfterUpdate(const TrainingState& state) const;
  bool stopsAfterEpoch(size_t finished) const;

  // Whether the update that took the labels from labelsBefore to state.labelsTotal ended a period of f
  // (in updates or labels; never in epochs, whose ends are the epochs' own).
  static bool due(const SchedulingParameter& f, const TrainingState& state, uint64_t labelsBefore);

private:
  static bool dueAtEpoch(const SchedulingParameter& f, size_t finished) {
    return f.unit == SchedulingUnit::epochs && f && finished % f.n == 0;
  }
  SchedulingParameter display_, valid_, save_;
  std::vector<SchedulingParameter> after_;  // --after's criteria, the first met stops
  uint64_t displayFirst_, afterBatches_;
  size_t afterEpochs_, delay_;
};

}  // namespace marian
