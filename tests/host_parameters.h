#pragma once
// A rank's parameters on the host, as OuterRounds reads and writes them (the sync group keeps
// them on its devices), and the end of an unstreamed round of local steps.
#include <vector>

#include "training/exchange/outer_rounds.h"

namespace marian {

struct HostParameters {
  std::vector<float> values;
  OuterRounds::ParameterAccess access() {
    return {[this](Range r) { return rangeOf(values, r); },
            [this](Range r, const std::vector<float>& v) { placeRange(values, r, v); }};
  }
};

// The end of round `round` (from 0) of one fragment: `values`, this rank's parameters after the
// round's local steps, become the next round's start.
inline void endRound(OuterRounds& rounds, uint64_t round, std::vector<float>& values) {
  HostParameters p{values};
  rounds.afterUpdate((round + 1) * rounds.schedule().steps() - 1, p.access());
  values = p.values;
}

}  // namespace marian
