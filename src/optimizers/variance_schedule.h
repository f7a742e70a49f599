#pragma once
// defines: marian::AdamVarianceSchedule — the steps (1-based) on which Adam's second moment takes
// in the gradient: every step by default; none after --adam-freeze-variance-after N (1-bit Adam's
// frozen variance, Tang et al. 2021); with --adam-variance-update-scaler kappa, 0/1 Adam's
// exponential rule (Lu et al. 2023): kappa updates 1 step apart, then kappa 2 apart, kappa 4
// apart, ... (steps 1..kappa, then kappa+2, kappa+4, ...), none after the freeze. The optimizer
// and the allreducer (which sends the gradients of the other steps in 1 bit) both read it here.
#include <algorithm>
#include <cstdint>

#include "common/options.h"

namespace marian {

struct AdamVarianceSchedule {
  uint64_t freezeAfter = 0;  // 0: never frozen
  uint64_t kappa = 0;        // 0: every step until the freeze

  // How many of the steps 1..t update the variance.
  uint64_t updatesUpTo(uint64_t t) const {
    uint64_t last = freezeAfter > 0 ? std::min(t, freezeAfter) : t;
    if(kappa == 0)
      return last;
    uint64_t count = 0, start = 0, interval = 1;
    while(start < last) {
      uint64_t end = start + kappa * interval;
      if(last < end)
        return count + (last - start) / interval;
      count += kappa;
      start = end;
      interval *= 2;
    }
    return count;
  }
  bool updatesAt(uint64_t t) const { return t > 0 && updatesUpTo(t) > updatesUpTo(t - 1); }
  // Whether some step is not an update (the variance is not Adam's plain one).
  bool skipsSteps() const { return freezeAfter > 0 || kappa > 0; }

  static AdamVarianceSchedule fromOptions(const Options& o) {
    return {uint64_t(o.get<int>("adam-freeze-variance-after")), uint64_t(o.get<int>("adam-variance-update-scaler"))};
  }
};

}  // namespace marian
