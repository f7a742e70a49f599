#pragma once
// The cases of OuterRounds (local steps across ranks, DiLoCo's outer step), written once against
// Transport and run on each rank: under mpirun by test_gradient_allreducer_mpi.cpp, on threads by
// test_gradient_allreducer_in_process.cpp. Two rounds by hand on 2 ranks (Nesterov), the same
// against double on any number of ranks (Nesterov and plain SGD with momentum), and the outer
// state through a checkpoint; streamed (fragments, a delay, the merge) against double, through a
// checkpoint with a fragment in flight, on the same and on fewer ranks.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <memory>

#include "comm/transport.h"
#include "data_files.h"
#include "comm/in_process_transport.h"
#include "outer_rounds_helpers.h"
#include "training/exchange/outer_rounds.h"

namespace marian {
namespace outer_rounds_cases {

inline Options localStepOptions(const std::string& optimizer, float lr, float momentum) {
  return Options(YAML::Load("local-steps: 4\nouter-optimizer: " + optimizer + "\nouter-learn-rate: " +
                            std::to_string(lr) + "\nouter-momentum: " + std::to_string(momentum) + "\n"));
}

// Round start [0, 0]; rank 0 ends the first round at [1, 2], rank 1 at [3, 6]: the mean
// pseudo-gradient g = [-2, -4], momentum m = g, the step lr (g + mu m) = 0.7 x 1.9 g, the start
// [2.66, 5.32]. Second round: rank 0 at [3, 5], rank 1 at [2, 6]: g = [0.16, -0.18],
// m = 0.9 [-2, -4] + g = [-1.64, -3.78], g + 0.9 m = [-1.316, -3.582], the start
// [2.66 + 0.9212, 5.32 + 2.5074] = [3.5812, 7.8274].
inline void twoRoundsByHand(Transport& t) {
  ASSERT_EQ(t.size(), 2);
  OuterRounds rounds(localStepOptions("nesterov", 0.7f, 0.9f), t, {0.f, 0.f});
  std::vector<float> values = t.rank() == 0 ? std::vector<float>{1, 2} : std::vector<float>{3, 6};
  endRound(rounds, 0, values);
  EXPECT_NEAR(values[0], 2.66f, 1e-6);
  EXPECT_NEAR(values[1], 5.32f, 1e-6);
  values = t.rank() == 0 ? std::vector<float>{3, 5} : std::vector<float>{2, 6};
  endRound(rounds, 1, values);
  EXPECT_NEAR(values[0], 3.5812f, 1e-5);
  EXPECT_NEAR(values[1], 7.8274f, 1e-5);
}

// Rank r's parameters at the end of round `round`: the start moved by its own amount.
inline float endOfRound(int rank, int round, size_t i, double start) {
  return float(start + 0.3 * (rank + 1) * std::sin(double(i) + round) - 0.1 * rank);
}

// Three rounds on every rank of the job against the outer step in double; then the outer state through a checkpoint into another OuterRounds, whose next round
// gives what the first's would have.
inline void roundsMatchDouble(Transport& t) {
  const int p = t.size();
  const size_t n = 7;
  for(auto [optimizer, lr, mu] : {std::tuple<std::string, float, float>{"nesterov", 0.7f, 0.9f},
                                  std::tuple<std::string, float, float>{"sgd", 0.5f, 0.8f}}) {
    SCOPED_TRACE(optimizer);
    Options o = localStepOptions(optimizer, lr, mu);
    std::vector<double> start(n), momentum(n, 0.0);
    for(size_t i = 0; i < n; ++i)
      start[i] = 0.25 * double(i) - 0.5;
    OuterRounds rounds(o, t, std::vector<float>(start.begin(), start.end()));
    auto oneRound = [&](OuterRounds& r, int round) {
      std::vector<float> mine(n);
      for(size_t i = 0; i < n; ++i)
        mine[i] = endOfRound(t.rank(), round, i, start[i]);
      endRound(r, uint64_t(round), mine);
      // the reference: the mean pseudo-gradient over every rank, then PyTorch's SGD step
      for(size_t i = 0; i < n; ++i) {
        double g = 0;
        for(int q = 0; q < p; ++q)
          g += (start[i] - double(endOfRound(q, round, i, start[i]))) / p;
        momentum[i] = mu * momentum[i] + g;
        start[i] -= lr * (optimizer == "nesterov" ? g + mu * momentum[i] : momentum[i]);
      }
      const std::vector<float>& got = mine;
      for(size_t i = 0; i < n; ++i)
        EXPECT_NEAR(got[i], start[i], 1e-5 * (1 + std::fabs(start[i]))) << "round " << round << " value " << i;
    };
    for(int round = 0; round < 3; ++round)
      oneRound(rounds, round);
    ModelState saved;
    saved.n = n;
    rounds.saveTo(saved);
    OuterRounds resumed(o, t, std::vector<float>(n, 0.f));
    resumed.restoreFrom(saved);
    oneRound(resumed, 3);
  }
}

// Streamed: H 6, F 3 (fragments of 3, 4 and 4 values), delay 2, alpha 0.5, Nesterov 0.7 0.9.
// After each update every rank's parameters have moved by their own amount (its local step);
// the reference in double holds every rank's: when a fragment is sent, the ranks' mean of the
// outer start minus their parameters; 2 updates later its outer step, and each rank's fragment
// becomes alpha (its own, moved meanwhile) + (1 - alpha) (the outer result). This rank's
// parameters match it after every update. A checkpoint after update 9 (fragment 0, sent after
// 8, is in flight until 10) resumed on the same ranks continues bitwise; resumed on one rank
// fewer, the fragment merges the saved mean; resumed with another delay, it is refused.
inline void streamedRoundsMatchDouble(Transport& t) {
  const int P = t.size();
  const size_t n = 11;
  const double alpha = 0.5, lr = 0.7, mu = 0.9;
  const char* yaml = "local-steps: 6\nouter-fragments: 3\nouter-delay: 2\nouter-merge-alpha: 0.5\n"
                     "outer-learn-rate: 0.7\nouter-momentum: 0.9\n";
  Options o{YAML::Load(yaml)};
  FragmentSchedule schedule(6, 3, 2);
  auto localStep = [](int rank, uint64_t update, size_t i) {
    return float(0.01 * (rank + 1) * std::cos(double(i) + 0.3 * double(update)) - 0.002 * rank);
  };
  std::vector<double> start(n), momentum(n, 0.0), mean(n, 0.0);
  for(size_t i = 0; i < n; ++i)
    start[i] = 0.1 * double(i);
  std::vector<std::vector<double>> local(size_t(P), start);
  auto rounds = std::make_unique<OuterRounds>(o, t, std::vector<float>(start.begin(), start.end()));
  HostParameters mine{std::vector<float>(start.begin(), start.end())};
  auto reference = [&](uint64_t count) {  // after update number `count`
    for(size_t p = 0; p < 3; ++p) {
      Range f = schedule.fragment(p, n);
      if(schedule.sends(p, count))
        for(size_t i = f.offset; i < f.end(); ++i) {
          mean[i] = 0;
          for(int r = 0; r < P; ++r)
            mean[i] += (start[i] - local[size_t(r)][i]) / P;
        }
      if(schedule.merges(p, count))
        for(size_t i = f.offset; i < f.end(); ++i) {
          momentum[i] = mu * momentum[i] + mean[i];
          start[i] -= lr * (mean[i] + mu * momentum[i]);
          for(int r = 0; r < P; ++r)
            local[size_t(r)][i] = alpha * local[size_t(r)][i] + (1 - alpha) * start[i];
        }
    }
  };
  auto update = [&](OuterRounds& rounds, HostParameters& params, uint64_t u) {
    for(size_t i = 0; i < n; ++i)
      params.values[i] += localStep(t.rank(), u, i);
    rounds.afterUpdate(u, params.access());
  };
  ModelState saved;
  HostParameters atSave;
  std::vector<double> startAtSave, momentumAtSave, meanAtSave;
  std::vector<std::vector<float>> after;  // this rank's parameters after updates 9..19
  for(uint64_t u = 0; u < 20; ++u) {
    update(*rounds, mine, u);
    for(int r = 0; r < P; ++r)
      for(size_t i = 0; i < n; ++i)
        local[size_t(r)][i] += double(localStep(r, u, i));
    reference(u + 1);
    for(size_t i = 0; i < n; ++i)
      ASSERT_NEAR(mine.values[i], local[size_t(t.rank())][i], 1e-5) << "after update " << u + 1 << ", value " << i;
    if(u + 1 == 9) {
      saved = savedOnEveryRank(t, *rounds, n);
      atSave = mine;
      startAtSave = start;
      momentumAtSave = momentum;
      meanAtSave = mean;
    }
    if(u + 1 >= 9)
      after.push_back(mine.values);
  }
  ASSERT_EQ(saved.extras.count("outer-in-flight"), 1u);
  ASSERT_EQ(saved.counters.at("outer-merge-after.0"), 10u) << "fragment 0, sent after update 8";
  ASSERT_EQ(saved.counters.count("outer-merge-after.1") + saved.counters.count("outer-merge-after.2"), 0u);
  rounds.reset();  // its exchanges done before the next one's start on the same channel

  auto resumed = std::make_unique<OuterRounds>(o, t, std::vector<float>(n, 0.f));
  resumed->restoreFrom(saved);
  HostParameters again = atSave;
  for(uint64_t u = 9; u < 20; ++u) {
    update(*resumed, again, u);
    ASSERT_EQ(again.values, after[size_t(u - 8)]) << "the resumed run after update " << u + 1;
  }
  resumed.reset();

  // another delay: the fragment in flight has no update to merge after
  std::string delayed = yaml;
  delayed.replace(delayed.find("outer-delay: 2"), 14, "outer-delay: 1");
  Options otherDelay{YAML::Load(delayed)};
  OuterRounds refusing(otherDelay, t, std::vector<float>(n, 0.f));
  EXPECT_NE(testdata::errorOf([&] { refusing.restoreFrom(saved); }).find("resume it with the same three"),
            std::string::npos);
  // a run without local steps (or on one rank) would drop the fragment's outer step: refused too
  EXPECT_NE(testdata::errorOf([&] { OuterRounds::refuseFragmentsInFlight(saved); })
                .find("--local-steps 6 --outer-fragments 3 --outer-delay 2: resume it with the same three on 2 ranks"),
            std::string::npos);

  // one rank fewer, every rank from the saved ranks' mean (LocalReplicas' rule): after update 10
  // fragment 0 merges the saved mean, fragment 1 is sent (its parameters unchanged)
  if(P < 3 || t.rank() != 0)
    return;
  std::vector<float> ranksMean(n);
  for(size_t i = 0; i < n; ++i)
    ranksMean[i] = float(i) * 0.05f + 1.f;
  InProcessNetwork fewer(P - 1);
  std::vector<std::vector<float>> got(size_t(P - 1));
  fewer.run([&](Transport& f) {
    OuterRounds smaller(o, f, std::vector<float>(n, 0.f));
    smaller.restoreFrom(saved);
    HostParameters params{ranksMean};
    smaller.afterUpdate(9, params.access());
    got[size_t(f.rank())] = params.values;
  });
  Range first = schedule.fragment(0, n);
  for(int r = 0; r < P - 1; ++r)
    for(size_t i = 0; i < n; ++i) {
      double want = ranksMean[i];
      if(i < first.end()) {
        double m = mu * momentumAtSave[i] + meanAtSave[i];
        double outer = startAtSave[i] - lr * (meanAtSave[i] + mu * m);
        want = alpha * ranksMean[i] + (1 - alpha) * outer;
      }
      EXPECT_NEAR(got[size_t(r)][i], want, 1e-5) << "rank " << r << " of " << P - 1 << ", value " << i;
    }
}

}  // namespace outer_rounds_cases
}  // namespace marian
