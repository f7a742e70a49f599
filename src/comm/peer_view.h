#pragma once
// defines: marian::RankActivity, marian::PeerView — what the ranks tell each other about their
// own pace beside the liveness heartbeats: its steps and its seconds of computing and of waiting
// for the other ranks so far, and the round trips each measures to the others. Rank 0 reads them to name
// the rank (or the link) the others wait for (SlowRankJudge).
#include <cstdint>
#include <vector>

namespace marian {

// One rank's steps since the start: seconds of its own work (forward, backward) and seconds it
// waited for the other ranks (the exchange, the agreement to stop).
struct RankActivity {
  uint64_t steps = 0;
  double computeSeconds = 0, waitSeconds = 0;
};

// Every rank's activity as this rank last heard it, and the round trips of the heartbeats.
struct PeerView {
  std::vector<RankActivity> activity;           // per rank; this rank's own is current
  std::vector<std::vector<float>> roundTripMs;  // [i][j]: rank i's recent mean round trip to j; < 0 unknown
  std::vector<float> fastestRoundTripMs;        // this rank's fastest round trip to each rank so far; < 0 unknown
};

}  // namespace marian
