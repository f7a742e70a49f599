// SlowRankJudge on made-up views: a straggler, one rank's slow link among 3 and 4 ranks, the
// link of two ranks, and the cases it must leave unnamed (little waiting, noise in the work, a
// slow pair that names no single rank, round trips not measured yet).
#include <gtest/gtest.h>

#include "comm/slow_rank_judge.h"

namespace marian {
namespace {

// p ranks, `steps` steps each with the given work and wait per step; every round trip `ms`.
PeerView view(size_t p, uint64_t steps, std::vector<double> compute, std::vector<double> wait, float ms = 1.f) {
  PeerView v;
  for(size_t r = 0; r < p; ++r)
    v.activity.push_back({steps, compute[r] * double(steps), wait[r] * double(steps)});
  v.roundTripMs.assign(p, std::vector<float>(p, ms));
  for(size_t r = 0; r < p; ++r)
    v.roundTripMs[r][r] = -1;
  v.fastestRoundTripMs.assign(p, ms);
  return v;
}

void slowLink(PeerView& v, size_t s, float ms) {
  for(size_t r = 0; r < v.roundTripMs.size(); ++r)
    if(r != s)
      v.roundTripMs[r][s] = v.roundTripMs[s][r] = ms;
}

TEST(SlowRankJudge, NamesTheStragglerAndHowLongTheOthersWaited) {
  SlowRankJudge judge;
  // rank 2 works 0.5 s per step, the others 0.2 s and then wait 0.32 s for it
  std::string verdict = judge.judge(view(4, 10, {0.2, 0.2, 0.5, 0.2}, {0.32, 0.32, 0.02, 0.32}));
  EXPECT_EQ(verdict, "rank 2 is the slow rank: its own work takes 0.500 s per update against 0.200 s on the others, "
                     "which waited 0.320 s per update for it (62% of their time)");
}

TEST(SlowRankJudge, JudgesOnlyTheStepsSinceTheLastCall) {
  SlowRankJudge judge;
  PeerView first = view(3, 10, {0.2, 0.6, 0.2}, {0.4, 0.0, 0.4});
  EXPECT_NE(judge.judge(first).find("rank 1 is the slow rank"), std::string::npos);
  // ten more steps in which every rank worked 0.2 s and nobody waited
  PeerView second = first;
  for(RankActivity& a : second.activity) {
    a.steps += 10;
    a.computeSeconds += 2.0;
  }
  EXPECT_EQ(judge.judge(second), "");
}

TEST(SlowRankJudge, NamesTheRankWhoseLinkIsSlow) {
  for(size_t p : {3, 4, 8}) {
    SlowRankJudge judge;
    PeerView v = view(p, 20, std::vector<double>(p, 0.1), std::vector<double>(p, 0.4), 2.f);
    slowLink(v, 1, 90.f);
    EXPECT_EQ(judge.judge(v), "rank 1's link is slow: round trips to it of 90 ms against 2.0 ms between the other "
                              "ranks (medians); the ranks waited 0.400 s per update for the exchange (80% of their "
                              "time)")
        << p << " ranks";
  }
}

TEST(SlowRankJudge, NamesTheLinkOfTwoRanksAgainstItsFastest) {
  SlowRankJudge judge;
  PeerView v = view(2, 20, {0.1, 0.1}, {0.3, 0.3}, 150.f);
  v.fastestRoundTripMs = {-1.f, 2.f};  // rank 0's to itself is unknown
  EXPECT_EQ(judge.judge(v), "the link between rank 0 and rank 1 is slow: round trips of 150 ms, 2.0 ms at their "
                            "fastest; the ranks waited 0.300 s per update for the exchange (75% of their time)");
  // a busy machine's scheduling delays alone: within kTwoRanksExtraMs of the fastest
  PeerView busy = view(2, 20, {0.1, 0.1}, {0.3, 0.3}, 25.f);
  busy.fastestRoundTripMs = {-1.f, 2.f};
  for(RankActivity& a : busy.activity) {  // 20 new steps since the first judgement, as many seconds
    a.steps *= 2;
    a.computeSeconds *= 2;
    a.waitSeconds *= 2;
  }
  EXPECT_EQ(judge.judge(busy), "");
}

TEST(SlowRankJudge, LeavesUnnamedWhatNoRankExplains) {
  // little waiting: a slow link that costs nothing is not worth a line
  {
    SlowRankJudge judge;
    PeerView v = view(3, 20, {1.0, 1.0, 1.0}, {0.1, 0.1, 0.1});
    slowLink(v, 2, 500.f);
    EXPECT_EQ(judge.judge(v), "");
  }
  // the waits are the link's, every rank's the same; one rank's work 30% longer explains little of them
  {
    SlowRankJudge judge;
    EXPECT_EQ(judge.judge(view(3, 20, {0.10, 0.13, 0.10}, {1.0, 0.97, 1.0})), "");
  }
  // one slow pair among 4 ranks: either end could be the slow one
  {
    SlowRankJudge judge;
    PeerView v = view(4, 20, std::vector<double>(4, 0.1), std::vector<double>(4, 0.4), 2.f);
    v.roundTripMs[0][3] = v.roundTripMs[3][0] = 300.f;
    EXPECT_EQ(judge.judge(v), "");
  }
  // a round trip not measured yet, or a rank that has not stepped since
  {
    SlowRankJudge judge;
    PeerView v = view(3, 20, std::vector<double>(3, 0.1), std::vector<double>(3, 0.4), 2.f);
    slowLink(v, 1, 90.f);
    v.roundTripMs[0][2] = v.roundTripMs[2][0] = -1.f;
    EXPECT_EQ(judge.judge(v), "");
    PeerView one = view(2, 0, {0.0, 0.0}, {0.0, 0.0}, 150.f);
    one.activity[0] = {20, 2.0, 6.0};
    EXPECT_EQ(SlowRankJudge().judge(one), "");
  }
}

}  // namespace
}  // namespace marian
