#include "comm/slow_rank_judge.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"
#include "common/median.h"

namespace marian {

namespace {

// The round trip between ranks i and j as either measured it (their mean where both did); < 0 unknown.
double roundTrip(const PeerView& v, size_t i, size_t j) {
  auto at = [&](size_t a, size_t b) {
    return a < v.roundTripMs.size() && b < v.roundTripMs[a].size() ? double(v.roundTripMs[a][b]) : -1.0;
  };
  double a = at(i, j), b = at(j, i);
  return a >= 0 && b >= 0 ? 0.5 * (a + b) : std::max(a, b);
}

std::string ms(double x) { return formatNumber(x < 10 ? "%.1f" : "%.0f", x); }
std::string seconds(double x) { return formatNumber(x < 1 ? "%.3f" : "%.2f", x); }
std::string percent(double x) { return formatNumber("%.0f", 100 * x); }

}  // namespace

std::string SlowRankJudge::judge(const PeerView& now) {
  size_t p = now.activity.size();
  std::vector<RankActivity> last = last_.size() == p ? last_ : std::vector<RankActivity>(p);
  last_ = now.activity;
  // per step since the last judgement, of the ranks that stepped
  std::vector<size_t> ranks;
  std::vector<double> compute(p, 0), wait(p, 0);
  for(size_t r = 0; r < p; ++r) {
    uint64_t steps = now.activity[r].steps - std::min(now.activity[r].steps, last[r].steps);
    if(steps == 0)
      continue;
    ranks.push_back(r);
    compute[r] = (now.activity[r].computeSeconds - last[r].computeSeconds) / double(steps);
    wait[r] = std::max(0.0, now.activity[r].waitSeconds - last[r].waitSeconds) / double(steps);
  }
  if(ranks.size() < 2)
    return "";
  double waited = 0, total = 0;
  for(size_t r : ranks) {
    waited += wait[r];
    total += compute[r] + wait[r];
  }
  if(!(total > 0) || waited < kWaitShare * total)
    return "";

  // a straggler: its own work stands out, and the others waited for it
  size_t slowest = ranks[0];
  for(size_t r : ranks)
    if(compute[r] > compute[slowest])
      slowest = r;
  std::vector<double> others, othersWait;
  for(size_t r : ranks)
    if(r != slowest) {
      others.push_back(compute[r]);
      othersWait.push_back(wait[r]);
    }
  double typical = median(others), theirWait = 0;
  for(double w : othersWait)
    theirWait += w / double(othersWait.size());
  if(theirWait > 0 && compute[slowest] >= kStragglerFactor * typical &&
     compute[slowest] - typical >= kStragglerExplains * theirWait)
    return format("rank {} is the slow rank: its own work takes {} s per update against {} s on the others, which "
                  "waited {} s per update for it ({}% of their time)",
                  slowest, seconds(compute[slowest]), seconds(typical), seconds(theirWait),
                  percent(theirWait / (typical + theirWait)));

  // a slow link: every round trip to one rank stands out against those between the others
  double meanWait = waited / double(ranks.size()), share = waited / total;
  if(p == 2) {
    double loaded = roundTrip(now, 0, 1);
    double fastest = now.fastestRoundTripMs.size() == 2 ? now.fastestRoundTripMs[1] : -1;
    if(loaded >= 0 && fastest >= 0 && loaded >= kTwoRanksFactor * fastest && loaded - fastest >= kTwoRanksExtraMs)
      return format("the link between rank 0 and rank 1 is slow: round trips of {} ms, {} ms at their fastest; the "
                    "ranks waited {} s per update for the exchange ({}% of their time)",
                    ms(loaded), ms(fastest), seconds(meanWait), percent(share));
    return "";
  }
  std::vector<size_t> slowLinks;
  double slowTo = 0, between = 0;
  for(size_t s = 0; s < p; ++s) {
    std::vector<double> toIt, elsewhere;
    for(size_t i = 0; i < p; ++i)
      for(size_t j = i + 1; j < p; ++j) {
        double rt = roundTrip(now, i, j);
        if(rt >= 0)
          (i == s || j == s ? toIt : elsewhere).push_back(rt);
      }
    if(toIt.size() != p - 1 || elsewhere.size() != (p - 1) * (p - 2) / 2)
      return "";  // a round trip not measured yet
    double a = median(toIt), b = median(elsewhere);
    if(a >= kSlowLinkFactor * b && a - b >= kSlowLinkExtraMs) {
      slowLinks.push_back(s);
      slowTo = a;
      between = b;
    }
  }
  if(slowLinks.size() != 1)
    return "";
  return format("rank {}'s link is slow: round trips to it of {} ms against {} ms between the other ranks (medians); "
                "the ranks waited {} s per update for the exchange ({}% of their time)",
                slowLinks[0], ms(slowTo), ms(between), seconds(meanWait), percent(share));
}

}  // namespace marian
