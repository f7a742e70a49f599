#pragma once
// The cases of OuterRounds (local steps across ranks, DiLoCo's outer step), written once against
// Transport and run on each rank: under mpirun by test_gradient_allreducer_mpi.cpp, on threads by
// test_gradient_allreducer_in_process.cpp. Two rounds by hand on 2 ranks (Nesterov), the same
// against double on any number of ranks (Nesterov and plain SGD with momentum), and the outer
// state through a checkpoint.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "comm/transport.h"
#include "host_parameters.h"
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

}  // namespace outer_rounds_cases
}  // namespace marian
