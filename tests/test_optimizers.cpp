// Optimizers on flat ranges against hand-computed steps, state round trips, lr schedules.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/error.h"
#include "common/options.h"
#include "optimizers/lr_schedule.h"
#include "optimizers/model_state.h"
#include "optimizers/optimizer.h"
#include "optimizers/parameter_shard.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

// values on a CPU tensor, read back on the host
struct HostValues {
  FlatBuffer buf;
  explicit HostValues(std::vector<float> v) : buf(cpuDevice(), Type::float32, v.size()) {
    kernels::fromHost(buf.all(), v);
  }
  std::vector<float> host() const { return kernels::toHost(buf.all()); }
};

TEST(Optimizers, AdagradAndSgdMatchHandComputation) {
  HostValues p({1.f, 2.f}), g({0.5f, -1.f});
  Adagrad adagrad(1e-8f);
  adagrad.update(p.buf.all(), g.buf.all(), 0.1f);  // gt = g^2: p -= 0.1 * g / |g|
  EXPECT_NEAR(p.host()[0], 0.9f, 1e-6);
  EXPECT_NEAR(p.host()[1], 2.1f, 1e-6);
  adagrad.update(p.buf.all(), g.buf.all(), 0.1f);  // gt = 2 g^2: p -= 0.1 / sqrt(2) * sign(g)
  EXPECT_NEAR(p.host()[0], 0.9f - 0.1f / std::sqrt(2.f), 1e-6);
  Sgd sgd;
  sgd.update(p.buf.all(), g.buf.all(), 1.f);
  EXPECT_NEAR(p.host()[1], 2.1f + 0.1f / std::sqrt(2.f) + 1.f, 1e-6);
}

// --exponential-smoothing as Marian's: the new values weigh max(alpha, 9 / (updates before + 10)),
// 0.9 at the first update, 9/11 at the second; a saved shard goes on from its count.
TEST(Optimizers, TheMovingAverageFollowsEarlyTrainingAsMarians) {
  HostValues p({1.f}), g({-1.f});
  ParameterShard shard({0, 1}, cpuDevice(), p.buf.all(), /*inPlace=*/true, std::make_unique<Sgd>(), 1e-4f);
  shard.update(g.buf.all(), 1.f);  // values 2
  float avg = 0.1f * 1.f + 0.9f * 2.f;
  EXPECT_NEAR(shard.toHost(true)[0], avg, 1e-6);
  ModelState saved;
  saved.n = 1;
  shard.saveTo(saved);
  EXPECT_EQ(saved.stepsAt(0), 1u);
  HostValues q({0.f});
  ParameterShard resumed({0, 1}, cpuDevice(), q.buf.all(), true, std::make_unique<Sgd>(), 1e-4f);
  resumed.restoreFrom(saved);
  resumed.update(g.buf.all(), 1.f);  // values 3
  avg = (2.f / 11.f) * avg + (9.f / 11.f) * 3.f;
  EXPECT_NEAR(resumed.toHost(true)[0], avg, 1e-5);
  for(int k = 2; k < 200000; ++k)  // alpha once 9 / (k + 10) is below it
    resumed.update(g.buf.all(), 0.f);
  float before = resumed.toHost(true)[0];
  HostValues g2({-1000.f});
  resumed.update(g2.buf.all(), 1.f);  // values 1003
  EXPECT_NEAR(resumed.toHost(true)[0], before + 1e-4f * (1003.f - before), 1e-3);
}

// Marian's 4th --optimizer-params: Adam's decoupled weight decay, p -= lr (m^ / (sqrt(v^) + eps) + w p).
TEST(Optimizers, AdamsWeightDecayIsMarians) {
  HostValues p({2.f, -1.f}), g({0.f, 0.5f});
  std::unique_ptr<Optimizer> adam = createOptimizer("adam", {0.9f, 0.98f, 1e-9f, 0.1f});
  adam->update(p.buf.all(), g.buf.all(), 0.01f);
  // step 1: m^ = g, v^ = g^2, so the moments' part is sign(g) (0 where g = 0)
  EXPECT_NEAR(p.host()[0], 2.f - 0.01f * (0.f + 0.1f * 2.f), 1e-6);
  EXPECT_NEAR(p.host()[1], -1.f - 0.01f * (1.f + 0.1f * -1.f), 1e-6);
  std::string error;
  try {
    createOptimizer("adam", {0.9f, 0.98f, 1e-9f, 0.1f, 1000.f});
  } catch(const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("adam takes at most 4 values"), std::string::npos) << error;
}

TEST(Optimizers, AdamOnAShardEqualsAdamOnTheWholeRange) {
  // sync-SGD and the parameter server run one optimizer per shard: same result as one optimizer
  std::vector<float> values = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f};
  std::vector<float> grads = {1.f, -2.f, 0.5f, 0.25f, -1.f, 3.f};
  HostValues whole(values), left({values.begin(), values.begin() + 2}), right({values.begin() + 2, values.end()});
  HostValues g(grads), gl({grads.begin(), grads.begin() + 2}), gr({grads.begin() + 2, grads.end()});
  Adam a, b, c;
  for(int step = 0; step < 3; ++step) {
    a.update(whole.buf.all(), g.buf.all(), 0.01f);
    b.update(left.buf.all(), gl.buf.all(), 0.01f);
    c.update(right.buf.all(), gr.buf.all(), 0.01f);
  }
  std::vector<float> joined = left.host(), r = right.host();
  joined.insert(joined.end(), r.begin(), r.end());
  EXPECT_EQ(joined, whole.host());
}

// --local-adam-variance mean: Adam divides by m^2 + (v - m^2) / R (bias-corrected moments), the
// second moment of the mean of R ranks' gradients, computed here in double over three steps; R 1
// is Adam's own step to the bit. From the options it is set to the ranks for local steps only.
TEST(Optimizers, AdamWithTheVarianceOfTheRanksMeanMatchesDouble) {
  const std::vector<std::vector<float>> steps = {{0.5f, -0.1f, 2.f}, {-0.3f, -0.1f, 1.f}, {0.2f, 0.4f, -3.f}};
  const double lr = 0.01, b1 = 0.9, b2 = 0.98, eps = 1e-9;
  for(size_t ranks : {1, 4}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    HostValues p({1.f, -2.f, 0.5f});
    Adam adam{float(b1), float(b2), float(eps)};
    adam.estimateVarianceOfMeanOver(ranks);
    std::vector<double> want = {1.0, -2.0, 0.5}, m(3, 0.0), v(3, 0.0);
    for(size_t t = 1; t <= steps.size(); ++t) {
      HostValues g(steps[t - 1]);
      adam.update(p.buf.all(), g.buf.all(), float(lr));
      for(size_t i = 0; i < 3; ++i) {
        m[i] = b1 * m[i] + (1 - b1) * steps[t - 1][i];
        v[i] = b2 * v[i] + (1 - b2) * steps[t - 1][i] * steps[t - 1][i];
        double mh = m[i] / (1 - std::pow(b1, double(t))), vh = v[i] / (1 - std::pow(b2, double(t)));
        double second = vh > mh * mh ? mh * mh + (vh - mh * mh) / double(ranks) : vh;
        want[i] -= lr * mh / (std::sqrt(second) + eps);
      }
      for(size_t i = 0; i < 3; ++i)
        EXPECT_NEAR(p.host()[i], want[i], 1e-6) << "step " << t << " value " << i;
    }
    if(ranks == 1) {  // Adam's own
      HostValues q({1.f, -2.f, 0.5f});
      Adam plain{float(b1), float(b2), float(eps)};
      for(const auto& s : steps) {
        HostValues g(s);
        plain.update(q.buf.all(), g.buf.all(), float(lr));
      }
      EXPECT_EQ(q.host(), p.host());
    }
  }
  // the second step's gradient changed sign on value 0: its update is larger than Adam's own
  // (a noisier gradient, whose variance the mean of 4 divides by 4), by less than sqrt(4)
  HostValues own({0.f}), mean({0.f});
  Adam a, b;
  b.estimateVarianceOfMeanOver(4);
  for(float x : {0.5f, -0.3f}) {
    HostValues g({x});
    a.update(own.buf.all(), g.buf.all(), 0.01f);
    b.update(mean.buf.all(), g.buf.all(), 0.01f);
  }
  double first = 0.01;  // step 1 moves both by lr (m^2 = v)
  double ratio = (mean.host()[0] + first) / (own.host()[0] + first);
  EXPECT_GT(ratio, 1.5);
  EXPECT_LT(ratio, 2.0);

  auto options = [](const std::string& yaml) { return Options(YAML::Load(yaml)); };
  std::string base = "optimizer: adam\noptimizer-params: [0.9, 0.98, 1e-9]\nadam-freeze-variance-after: 0\n"
                     "adam-variance-update-scaler: 0\n";
  HostValues x({1.f}), y({1.f}), g({0.5f});
  auto local = createOptimizer(options(base + "local-steps: 4\nlocal-adam-variance: mean\n"), 4);
  Adam four(0.9f, 0.98f, 1e-9f);
  four.estimateVarianceOfMeanOver(4);
  for(int t = 0; t < 2; ++t) {
    local->update(x.buf.all(), g.buf.all(), 0.1f);
    four.update(y.buf.all(), g.buf.all(), 0.1f);
  }
  EXPECT_EQ(x.host(), y.host());
  EXPECT_THROW(createOptimizer(options(base + "local-steps: 0\nlocal-adam-variance: mean\n"), 4), Error);
  EXPECT_THROW(
      createOptimizer(options("optimizer: sgd\noptimizer-params: []\nadam-freeze-variance-after: 0\n"
                              "adam-variance-update-scaler: 0\nlocal-steps: 4\nlocal-adam-variance: mean\n"),
                      4),
      Error);
}

TEST(Optimizers, StateRoundTripContinuesIdentically) {
  HostValues p1({1.f, 2.f, 3.f}), p2({1.f, 2.f, 3.f}), g({0.3f, -0.1f, 0.2f});
  auto a = createOptimizer("adam", {0.9f, 0.98f, 1e-9f});
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  kernels::copy(p2.buf.all(), p1.buf.all());
  auto b = createOptimizer("adam", {0.9f, 0.98f, 1e-9f});
  b->setState(a->state(), cpuDevice());
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  b->update(p2.buf.all(), g.buf.all(), 0.1f);
  EXPECT_EQ(p1.host(), p2.host());
  EXPECT_EQ(a->state().steps, 2u);
  EXPECT_THROW(createOptimizer("rmsprop", {}), Error);
}

// Marian's resetStats (--lr-decay-reset-optimizer, --no-optimizer-reload): after it a step is a
// new optimizer's first, Adam's bias correction counted afresh, also across a checkpoint (the
// shard saves where the statistics restarted), while the step count goes on for the moving average.
TEST(Optimizers, AResetStepsAsANewOptimizerAndTheCountGoesOn) {
  HostValues g({0.3f, -0.1f, 0.2f});
  for(std::string name : {"adam", "adagrad"}) {
    HostValues p({1.f, 2.f, 3.f}), fresh({0.f, 0.f, 0.f});
    auto used = createOptimizer(name, {});
    for(int k = 0; k < 5; ++k)
      used->update(p.buf.all(), g.buf.all(), 0.1f);
    used->resetStatistics();
    EXPECT_EQ(used->statisticsFrom(), 5u) << name;
    for(float v : kernels::toHost(used->stateTensors()[0]))
      EXPECT_EQ(v, 0.f) << name;
    kernels::copy(fresh.buf.all(), p.buf.all());
    auto created = createOptimizer(name, {});
    for(int k = 0; k < 3; ++k) {
      used->update(p.buf.all(), g.buf.all(), 0.1f);
      created->update(fresh.buf.all(), g.buf.all(), 0.1f);
      EXPECT_EQ(p.host(), fresh.host()) << name << " step " << k;
    }
    EXPECT_EQ(used->steps(), 8u) << name;
  }
  // a shard saves and restores where the statistics restarted
  HostValues p({1.f, 2.f, 3.f}), q({0.f, 0.f, 0.f});
  ParameterShard shard({0, 3}, cpuDevice(), p.buf.all(), true, createOptimizer("adam", {}), 0.f);
  for(int k = 0; k < 4; ++k)
    shard.update(g.buf.all(), 0.1f);
  shard.resetOptimizer();
  shard.update(g.buf.all(), 0.1f);
  ModelState saved;
  saved.n = 3;
  shard.saveTo(saved);
  EXPECT_EQ(saved.counters.at(ModelState::kOptimizerStatisticsFrom), 4u);
  ParameterShard resumed({0, 3}, cpuDevice(), q.buf.all(), true, createOptimizer("adam", {}), 0.f);
  resumed.restoreFrom(saved);
  shard.update(g.buf.all(), 0.1f);
  resumed.update(g.buf.all(), 0.1f);
  EXPECT_EQ(p.host(), q.host());
}

// --adam-freeze-variance-after: the second moment stops at the step count, also across a
// checkpoint (the count is in the state), while the first moment goes on.
TEST(Optimizers, AdamFrozenVarianceStopsAtItsStepAcrossACheckpoint) {
  HostValues p1({1.f, 2.f, 3.f}), p2({1.f, 2.f, 3.f}), g({0.3f, -0.1f, 0.2f}), big({3.f, -1.f, 2.f});
  auto a = createOptimizer("adam", {0.9f, 0.98f, 1e-9f}, AdamVarianceSchedule{2, 0});
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  std::vector<float> v2 = a->state().arrays.at("adam_vt"), m2 = a->state().arrays.at("adam_mt");
  kernels::copy(p2.buf.all(), p1.buf.all());
  auto b = createOptimizer("adam", {0.9f, 0.98f, 1e-9f}, AdamVarianceSchedule{2, 0});
  b->setState(a->state(), cpuDevice());
  a->update(p1.buf.all(), big.buf.all(), 0.1f);
  b->update(p2.buf.all(), big.buf.all(), 0.1f);
  EXPECT_EQ(p1.host(), p2.host());
  EXPECT_EQ(a->state().arrays.at("adam_vt"), v2) << "frozen after step 2";
  EXPECT_NE(a->state().arrays.at("adam_mt"), m2);
  auto unfrozen = createOptimizer("adam", {0.9f, 0.98f, 1e-9f});
  unfrozen->setState(b->state(), cpuDevice());
  unfrozen->update(p2.buf.all(), big.buf.all(), 0.1f);
  EXPECT_NE(unfrozen->state().arrays.at("adam_vt"), v2);
}

// 0/1 Adam's exponential rule: kappa 2 puts the variance's steps at 1, 2, then 2 apart (4, 6),
// then 4 apart (10, 14), 8 apart (22, ...); the freeze cuts it; kappa 0 is every step until it.
TEST(Optimizers, AdamVarianceScheduleByHand) {
  AdamVarianceSchedule zeroOne{20, 2};
  std::vector<uint64_t> steps;
  for(uint64_t t = 1; t <= 40; ++t)
    if(zeroOne.updatesAt(t))
      steps.push_back(t);
  EXPECT_EQ(steps, (std::vector<uint64_t>{1, 2, 4, 6, 10, 14}));
  EXPECT_EQ(zeroOne.updatesUpTo(9), 4u);
  EXPECT_EQ(zeroOne.updatesUpTo(1000), 6u);
  EXPECT_EQ((AdamVarianceSchedule{0, 2}.updatesUpTo(30)), 8u);  // 1, 2, 4, 6, 10, 14, 22, 30
  AdamVarianceSchedule frozen{3, 0}, plain;
  EXPECT_TRUE(frozen.updatesAt(3));
  EXPECT_FALSE(frozen.updatesAt(4));
  EXPECT_EQ(frozen.updatesUpTo(10), 3u);
  EXPECT_EQ(plain.updatesUpTo(10), 10u);
  EXPECT_FALSE(plain.skipsSteps());
}

// Adam on 0/1 Adam's schedule: v changes on steps 1, 2, 4 only (kappa 2, frozen after 5), m on
// every step, and a checkpoint after step 2 continues identically.
TEST(Optimizers, AdamFollowsTheVarianceScheduleAcrossACheckpoint) {
  HostValues p1({1.f, 2.f, 3.f}), p2({1.f, 2.f, 3.f}), g({0.3f, -0.1f, 0.2f});
  AdamVarianceSchedule schedule{5, 2};
  auto a = createOptimizer("adam", {0.9f, 0.98f, 1e-9f}, schedule);
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  a->update(p1.buf.all(), g.buf.all(), 0.1f);
  kernels::copy(p2.buf.all(), p1.buf.all());
  auto b = createOptimizer("adam", {0.9f, 0.98f, 1e-9f}, schedule);
  b->setState(a->state(), cpuDevice());
  std::vector<float> v = a->state().arrays.at("adam_vt");
  for(uint64_t t = 3; t <= 7; ++t) {
    HostValues big({3.f * float(t), -1.f, 2.f});
    std::vector<float> m = a->state().arrays.at("adam_mt");
    a->update(p1.buf.all(), big.buf.all(), 0.1f);
    b->update(p2.buf.all(), big.buf.all(), 0.1f);
    EXPECT_EQ(p1.host(), p2.host()) << "step " << t;
    EXPECT_NE(a->state().arrays.at("adam_mt"), m) << "step " << t;
    std::vector<float> after = a->state().arrays.at("adam_vt");
    if(t == 4)
      EXPECT_NE(after, v) << "step 4 updates the variance";
    else
      EXPECT_EQ(after, v) << "step " << t << " leaves the variance";
    v = after;
  }
}

// The residuals of another layout: summed in the order of their numbers (rank 10 after rank 2,
// where the names sort it before), scaled, other names left out, a wrong size named.
TEST(ModelStateTest, SumOfExtrasAddsNumberedArraysInNumberOrder) {
  ModelState state;
  state.n = 2;
  EXPECT_TRUE(state.sumOfExtras("allreduce-residual.rank", 1.f).empty());
  state.extras["allreduce-residual.rank0"] = {1e8f, 1.f};
  state.extras["allreduce-residual.rank2"] = {1.f, 2.f};
  state.extras["allreduce-residual.rank10"] = {-1e8f, 3.f};
  state.extras["allreduce-threshold.rank0"] = {5.f};
  state.extras["allreduce-residual.rankX"] = {7.f, 7.f};
  // (1e8 + 1) - 1e8 = 0 in float in number order; 1e8 - 1e8 + 1 = 1 in name order
  EXPECT_EQ(state.sumOfExtras("allreduce-residual.rank", 1.f), (std::vector<float>{0.f, 6.f}));
  EXPECT_EQ(state.sumOfExtras("allreduce-residual.rank", 0.5f), (std::vector<float>{0.f, 3.f}));
  state.extras["allreduce-residual.rank3"] = {1.f};
  try {
    state.sumOfExtras("allreduce-residual.rank", 1.f);
    ADD_FAILURE() << "a residual of 1 value for a model of 2 was summed";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'allreduce-residual.rank3' holds 1 values"), std::string::npos) << e.what();
  }
}

// A parameter server's node sends rank 0 its shard's arrays cut to its range (not padded to the
// model) and its clients' residuals whole: merged, the parts give the model's state as the padded
// parts did, in fewer bytes.
TEST(ModelStateTest, PartsCutToTheirShardsMergeAsPaddedOnes) {
  const Range first{0, 2}, second{2, 3};
  auto part = [](Range r, float base, const std::string& client) {
    ModelState s;
    s.n = 5;
    s.values.assign(5, 0.f);
    s.optimizer["adam_mt"].assign(5, 0.f);
    s.extras["server-view.client0"].assign(5, 0.f);
    for(size_t i = r.offset; i < r.end(); ++i) {
      s.values[i] = base + float(i);
      s.optimizer["adam_mt"][i] = -base - float(i);
      s.extras["server-view.client0"][i] = 10 * base + float(i);
    }
    s.counters["version.shard" + client] = size_t(base);
    return s;
  };
  auto whole = [&](bool cut) {
    ModelState merged;
    merged.n = 5;
    for(auto [range, base, client] :
        {std::tuple{first, 1.f, std::string("0")}, std::tuple{second, 2.f, std::string("1")}}) {
      ModelState p = part(range, base, client);
      size_t padded = p.pack().size();
      if(cut) {  // the shard's arrays, before its clients add theirs (nodeState)
        p.cutTo(range);
        EXPECT_EQ(p.values.size(), range.size);
        EXPECT_EQ(p.extras["server-view.client0"].size(), range.size);
        EXPECT_LT(p.pack().size(), padded);
      }
      p.extras["dropping-residual.client" + client] = {base, base, base, base, base};  // a client's, whole
      merged.merge(ModelState::unpack(p.pack()), range);
    }
    return merged;
  };
  ModelState padded = whole(false), cut = whole(true);
  EXPECT_EQ(cut.values, (std::vector<float>{1, 2, 4, 5, 6}));
  EXPECT_EQ(cut.values, padded.values);
  EXPECT_EQ(cut.optimizer, padded.optimizer);
  EXPECT_EQ(cut.extras, padded.extras);
  EXPECT_EQ(cut.extras.at("server-view.client0"), (std::vector<float>{10, 11, 22, 23, 24}));
  EXPECT_EQ(cut.counters, padded.counters);
}

TEST(LearningRate, WarmupAndInverseSquareRootDecay) {
  LearningRateSchedule s(0.001f, "100", {"200"});
  // progress is the updates done before this one, as Marian's scheduler counts: the first update
  // of the warm-up has rate 0 (real Marian's validation after it equals the initial model's)
  EXPECT_EQ(s.at(0, 0), 0.f);
  EXPECT_NEAR(s.at(1, 0), 0.001f * 1 / 100.f, 1e-9);
  EXPECT_NEAR(s.at(50, 0), 0.001f * 50 / 100.f, 1e-9);
  EXPECT_NEAR(s.at(200, 0), 0.001f, 1e-9);
  EXPECT_NEAR(s.at(800, 0), 0.001f * std::sqrt(200.f / 800.f), 1e-9);
  LearningRateSchedule labels(0.5f, "1000t", {"0"});
  EXPECT_NEAR(labels.at(3, 250), 0.125f, 1e-7);
  // epochs as Marian counts them: the current epoch's number, so 2e halves epoch 1's rate
  LearningRateSchedule epochs(0.4f, "2e", {"0"});
  EXPECT_NEAR(epochs.at(500, 9000, 1), 0.2f, 1e-7);
  EXPECT_NEAR(epochs.at(900, 19000, 2), 0.4f, 1e-7);
  EXPECT_NEAR(LearningRateSchedule(0.4f, "1e", {"0"}).at(0, 0, 1), 0.4f, 1e-7);
  // Marian's second value: the decay starts there, sqrt(N / (progress - START + N))
  LearningRateSchedule late(1.f, "0", {"100", "1000"});
  EXPECT_NEAR(late.at(1000, 0), 1.f, 1e-7);
  EXPECT_NEAR(late.at(1300, 0), std::sqrt(100.f / 400.f), 1e-7);
  EXPECT_NEAR(LearningRateSchedule(1.f, "0", {"2e"}).at(0, 0, 8), 0.5f, 1e-7);
  // --lr-warmup-start-rate: the ramp starts there (Marian's linear interpolation)
  LearningRateSchedule fromStart(0.001f, "100", {"0"}, 0.0002f);
  EXPECT_NEAR(fromStart.at(0, 0), 0.0002f, 1e-9);
  EXPECT_NEAR(fromStart.at(50, 0), 0.0002f + 0.0008f * 50 / 100.f, 1e-9);
  EXPECT_NEAR(fromStart.at(500, 0), 0.001f, 1e-9);
  EXPECT_THROW(LearningRateSchedule(0.1f, "0", {"100u", "2e"}), Error);
  EXPECT_THROW(LearningRateSchedule(0.1f, "0", {"1", "2", "3"}), Error);
}

}  // namespace
}  // namespace marian
