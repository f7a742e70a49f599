#pragma once
// What the OuterRounds cases share: a rank's parameters on the host, as OuterRounds reads and
// writes them (the sync group keeps them on its devices) and the end of an unstreamed round.
#include <vector>

#include "comm/transport.h"
#include "gradient_allreducer_cases.h"
#include "training/exchange/outer_rounds.h"

namespace marian {

struct HostParameters {
  std::vector<float> values;
  OuterRounds::ParameterAccess access() {
    return {[this](Range r) { return rangeOf(values, r); },
            [this](Range r, const std::vector<float>& v) { placeRange(values, r, v); }};
  }
};

// Round `round` (from 0) with no delay: `values`, this rank's parameters after the round's local
// steps, stand for every update of it; each fragment sent after its update becomes its next start
// (one fragment: the whole of `values`, after the round's last update).
inline void endRound(OuterRounds& rounds, uint64_t round, std::vector<float>& values) {
  HostParameters p{values};
  uint64_t H = rounds.schedule().steps();
  for(uint64_t u = round * H; u < (round + 1) * H; ++u)
    rounds.afterUpdate(u, p.access());
  values = p.values;
}

using gradient_allreducer_cases::savedOnEveryRank;

}  // namespace marian
