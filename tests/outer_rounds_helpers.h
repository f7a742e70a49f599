#pragma once
// What the OuterRounds cases share: a rank's parameters on the host, as OuterRounds reads and
// writes them (the sync group keeps them on its devices); the end of an unstreamed round; and a
// checkpoint of the outer state as rank 0 saves it, given to every rank.
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

// rounds.saveTo on every rank (collective), rank 0's state read back by every rank.
inline ModelState savedOnEveryRank(Transport& t, OuterRounds& rounds, size_t n) {
  ModelState state;
  state.n = n;
  state.ranks = t.size();
  rounds.saveTo(state);
  std::vector<char> packed = state.pack();
  if(t.rank() == 0)
    for(int r = 1; r < t.size(); ++r)
      t.send(Channel::collective, r, gradient_allreducer_cases::kTestTag, packed, t.peerTimeout());
  else
    packed = t.recv(Channel::collective, 0, gradient_allreducer_cases::kTestTag, t.peerTimeout(), "the checkpoint").bytes;
  return ModelState::unpack(packed);
}

}  // namespace marian
