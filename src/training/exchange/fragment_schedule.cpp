#include "training/exchange/fragment_schedule.h"

#include "common/error.h"

namespace marian {

FragmentSchedule::FragmentSchedule(uint64_t steps, uint64_t fragments, uint64_t delay)
    : steps_(steps), fragments_(fragments), delay_(delay) {
  ABORT_IF(steps_ == 0, "--local-steps must be at least 1 for a schedule of fragments");
  ABORT_IF(fragments_ == 0 || fragments_ > steps_,
           "--outer-fragments {} with --local-steps {}: from 1 to the local steps (one fragment sent after an "
           "update at most)",
           fragments_, steps_);
  ABORT_IF(delay_ >= steps_,
           "--outer-delay {} with --local-steps {}: less than the local steps (a fragment merged before it is sent "
           "again)",
           delay_, steps_);
}

}  // namespace marian
