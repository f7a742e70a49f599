#pragma once
// defines: marian::SlowRankJudge — names the rank the others wait for, from what the ranks said
// of themselves since the last judgement (PeerView): a rank whose own work per step stands out
// (a straggler: a busy or slower node), or a rank whose round trips to every other rank stand out
// while those between the others do not (its link; with two ranks, the link between them against
// its fastest round trip). Says nothing while the exchange costs the ranks little.
#include <string>
#include <vector>

#include "comm/peer_view.h"

namespace marian {

class SlowRankJudge {
public:
  // A straggler's work per step is this many times the median of the others', and its excess
  // explains this share of the others' wait at least ...
  static constexpr double kStragglerFactor = 1.25, kStragglerExplains = 0.3;
  // ... a slow link's round trips this many times those between the others and kSlowLinkExtraMs
  // above them; with two ranks, against the link's fastest, which a busy machine's scheduling
  // delays stray further from (the stricter kTwoRanks* limits). Judged only while the ranks wait
  // kWaitShare of their time.
  static constexpr double kSlowLinkFactor = 3, kSlowLinkExtraMs = 10, kTwoRanksFactor = 5, kTwoRanksExtraMs = 30,
                          kWaitShare = 0.2;

  // The verdict on the steps since the last call ("" when no rank is waited for), worded for the
  // log: who, by how much, and how long the others waited per step.
  std::string judge(const PeerView& now);

private:
  std::vector<RankActivity> last_;
};

}  // namespace marian
