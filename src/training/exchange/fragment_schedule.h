#pragma once
// defines: marian::FragmentSchedule — when each fragment of the parameters is exchanged in
// training with local steps (Streaming DiLoCo, Douillard et al. 2025). The n values are cut into
// F consecutive fragments of equal size (equalPart). Fragment p is sent after the updates
// numbered (from 1) o_p, o_p + H, o_p + 2 H, ..., with o_p = floor(H (p + 1) / F): torchft's
// offsets, the last fragment after update H as a single one would be. It is merged `delay`
// updates after it was sent, the exchange running beside those updates. So every value is sent
// once every H updates, and the F exchanges of a round are spread over it. F = 1, delay 0 is
// DiLoCo: the whole model at the end of each round, merged at once.
#include <cstdint>

#include "common/equal_split.h"

namespace marian {

class FragmentSchedule {
public:
  // steps H >= 1, 1 <= fragments <= H, delay < H (a fragment merged before it is sent again):
  // anything else is an error naming the options.
  FragmentSchedule(uint64_t steps, uint64_t fragments, uint64_t delay);

  uint64_t steps() const { return steps_; }
  uint64_t fragments() const { return fragments_; }
  uint64_t delay() const { return delay_; }
  Range fragment(size_t p, size_t n) const { return equalPart(n, p, size_t(fragments_)); }
  // o_p: the update (from 1) after which fragment p is first sent
  uint64_t offset(size_t p) const { return steps_ * (p + 1) / fragments_; }
  // Whether fragment p is sent / merged after `count` updates.
  bool sends(size_t p, uint64_t count) const { return count >= offset(p) && (count - offset(p)) % steps_ == 0; }
  bool merges(size_t p, uint64_t count) const { return count >= delay_ && sends(p, count - delay_); }
  bool operator==(const FragmentSchedule& o) const {
    return steps_ == o.steps_ && fragments_ == o.fragments_ && delay_ == o.delay_;
  }

private:
  uint64_t steps_, fragments_, delay_;
};

}  // namespace marian
