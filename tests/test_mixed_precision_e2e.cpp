// --precision, --fp16 and --cost-scaling end to end on the synthetic corpus: cost scaling by a power
// of two changes nothing in float32, an overflowing factor skips updates and comes down, a resume
// continues the factor's schedule, bfloat16
// trains and resumes across precisions, on one device and on two with delayed updates (where the
// CPU has AVX512-BF16 or AMX), and what cannot run
// here is a clear error. CostScaling's schedule by hand.
#include <cmath>
#include <regex>

#include "e2e_helpers.h"
#include "tensors/product_precision.h"
#include "training/graph_groups/cost_scaling.h"

namespace {

using e2e::costs;
using e2e::RunResult;

bool hasBfloat16() { return marian::cpuLacksProductType(marian::ProductType::bfloat16).empty(); }

// (update, factor) of every "update N skipped, the factor is now F" warning
std::vector<std::pair<int, double>> skipped(const std::string& log) {
  std::regex line("The gradient of update (\\d+) is not finite with cost scaling [0-9.e+]+: update skipped, the factor is now ([0-9.e+]+)");
  std::vector<std::pair<int, double>> out;
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
    out.push_back({std::stoi((*it)[1]), std::stod((*it)[2])});
  return out;
}

}  // namespace

TEST(CostScaling, ScheduleByHand) {
  marian::CostScaling s(8.f, 3, 2.f, 2.f);
  EXPECT_EQ(s.factor(), 8.f);
  EXPECT_TRUE(s.afterGradient(true));
  EXPECT_TRUE(s.afterGradient(true));
  EXPECT_EQ(s.factor(), 8.f);
  EXPECT_TRUE(s.afterGradient(true));  // the third finite one in a row: up
  EXPECT_EQ(s.factor(), 16.f);
  EXPECT_TRUE(s.afterGradient(true));
  EXPECT_FALSE(s.afterGradient(false));  // skipped, down; the count starts again
  EXPECT_EQ(s.factor(), 8.f);
  EXPECT_TRUE(s.afterGradient(true));
  EXPECT_TRUE(s.afterGradient(true));
  EXPECT_EQ(s.factor(), 8.f);
  EXPECT_FALSE(s.afterGradient(false));
  EXPECT_FALSE(s.afterGradient(false));
  EXPECT_FALSE(s.afterGradient(false));  // not below the minimum
  EXPECT_EQ(s.factor(), 2.f);
  marian::CostScaling constant(8.f, 10000, 1.f, 8.f);  // Marian's --fp16 default: a constant 8
  EXPECT_FALSE(constant.afterGradient(false));
  EXPECT_EQ(constant.factor(), 8.f);
  EXPECT_EQ(constant.skipsInARow(), 1u);
  EXPECT_FALSE(constant.afterGradient(false));
  EXPECT_EQ(constant.skipsInARow(), 2u);  // (training ends at kSkipsMeaningDivergence)
  EXPECT_TRUE(constant.afterGradient(true));
  EXPECT_EQ(constant.skipsInARow(), 0u);
  marian::CostScaling growing(1e38f, 1, 1e10f, 1.f);
  EXPECT_TRUE(growing.afterGradient(true));
  EXPECT_EQ(growing.factor(), 1e38f) << "grows only while finite";
  EXPECT_THROW(marian::CostScaling(0.f, 1, 2.f, 1.f), std::exception);
  EXPECT_THROW(marian::CostScaling(8.f, 0, 2.f, 1.f), std::exception);
  EXPECT_THROW(marian::CostScaling(8.f, 1, 0.5f, 1.f), std::exception);
  EXPECT_THROW(marian::CostScaling(8.f, 1, 2.f, 16.f), std::exception);
}

// Multiplying the cost by 2^10 and the gradient by 2^-10 is exact in float32 (no overflow, no
// underflow here): with plain SGD (whose step is the gradient's size, so a factor left on the
// gradient would show) every Cost is as without; a factor of 1000 is not exact, Costs to rounding.
TEST(MixedPrecision, CostScalingByAPowerOfTwoChangesNothingInFloat32) {
  std::string sgd = "--after-batches 20 --optimizer sgd --learn-rate 0.0005 --clip-norm 0 ";
  RunResult plain = e2e::run("cs-plain", sgd);
  RunResult scaled = e2e::run("cs-scaled", sgd + "--cost-scaling 1024 5 2 1");
  RunResult thousand = e2e::run("cs-thousand", sgd + "--cost-scaling 1000 1000 2 1");
  ASSERT_EQ(plain.status, 0) << plain.log;
  ASSERT_EQ(scaled.status, 0) << scaled.log;
  ASSERT_EQ(thousand.status, 0) << thousand.log;
  EXPECT_NE(scaled.log.find("cost scaling: factor 1024"), std::string::npos) << scaled.log;
  auto a = costs(plain.log), b = costs(scaled.log), c = costs(thousand.log);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a, b) << scaled.log;
  ASSERT_EQ(c.size(), a.size());
  bool learns = false;
  for(size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(std::stod(c[i].second), std::stod(a[i].second), 1e-4 * std::stod(a[i].second)) << "update " << a[i].first;
    learns = learns || a[i].second != a[0].second;
  }
  EXPECT_TRUE(learns) << plain.log;
  EXPECT_TRUE(skipped(scaled.log).empty()) << scaled.log;
}

// A factor of 2^127 overflows the gradient: that update is skipped and the factor halves, again
// at each overflow (updates 1, 2, ... until the gradient is finite, and later ones when it grows),
// never growing back within the frequency; the others are applied and training goes on.
TEST(MixedPrecision, OverflowSkipsTheUpdateAndLowersTheFactor) {
  RunResult r = e2e::run("cs-overflow", "--after-batches 20 --cost-scaling 1.7014118e38 1000 2 1");
  ASSERT_EQ(r.status, 0) << r.log;
  auto s = skipped(r.log);
  ASSERT_GE(s.size(), 1u) << r.log;
  ASSERT_LT(s.size(), 20u) << r.log;
  EXPECT_EQ(s[0].first, 1) << r.log;
  for(size_t i = 0; i < s.size(); ++i)
    EXPECT_NEAR(s[i].second, 1.7014118e38 / std::pow(2.0, double(i + 1)), 1e-5 * s[i].second) << r.log;
  auto c = costs(r.log);
  ASSERT_EQ(c.size(), 4u);
  for(auto& [update, cost] : c)
    EXPECT_TRUE(std::isfinite(std::stod(cost))) << update;
}

// A checkpoint holds where cost scaling's schedule stands: stopped at update 10 and resumed, the
// run skips the updates and prints the Costs of the run that went through (with the factor of the
// options again, it would skip its first updates anew).
TEST(MixedPrecision, CostScalingResumesWhereItsScheduleStood) {
  const std::string schedule = " --cost-scaling 1.7014118e38 3 2 1";
  RunResult whole = e2e::run("cs-whole", "--after-batches 20" + schedule);
  RunResult first = e2e::run("cs-resume", "--after-batches 10 --save-freq 10" + schedule);
  RunResult second = e2e::run("cs-resume", "--after-batches 20 --save-freq 10" + schedule, /*fresh=*/false);
  for(const RunResult* r : {&whole, &first, &second})
    ASSERT_EQ(r->status, 0) << r->log;
  EXPECT_NE(second.log.find("Cost scaling continues from the checkpoint"), std::string::npos) << second.log;
  std::vector<std::pair<int, double>> after10;
  for(const auto& s : skipped(whole.log))
    if(s.first > 10)
      after10.push_back(s);
  ASSERT_FALSE(after10.empty()) << "the schedule should skip after update 10 (the factor grows into overflow):\n"
                                << whole.log;
  EXPECT_EQ(skipped(second.log), after10) << second.log;
  auto all = costs(whole.log), resumed = costs(second.log);
  ASSERT_EQ(all.size(), 4u) << whole.log;
  ASSERT_EQ(resumed.size(), 2u) << second.log;
  EXPECT_EQ(resumed[0], all[2]);
  EXPECT_EQ(resumed[1], all[3]);
}

// bfloat16 products: the Costs follow float32's to bfloat16's rounding, and a checkpoint (float32
// master weights) resumes in either precision.
TEST(MixedPrecision, Bfloat16TrainsAndResumesAcrossPrecisions) {
  if(!hasBfloat16())
    GTEST_SKIP() << marian::cpuLacksProductType(marian::ProductType::bfloat16);
  RunResult f32 = e2e::run("bf-f32", "--after-batches 20");
  RunResult bf16 = e2e::run("bf-bf16", "--after-batches 20 --precision bfloat16 float32");
  ASSERT_EQ(f32.status, 0) << f32.log;
  ASSERT_EQ(bf16.status, 0) << bf16.log;
  auto a = costs(f32.log), b = costs(bf16.log);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  bool differs = false;
  for(size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(std::stod(b[i].second), std::stod(a[i].second), 0.02 * std::stod(a[i].second)) << "update " << a[i].first;
    differs = differs || a[i].second != b[i].second;
  }
  EXPECT_TRUE(differs) << "bfloat16 products should round somewhere";
  // bfloat16 to update 10, float32 to 20, bfloat16 again to 30
  RunResult first = e2e::run("bf-resume", "--after-batches 10 --save-freq 10 --precision bfloat16 float32");
  RunResult second = e2e::run("bf-resume", "--after-batches 20 --save-freq 10", /*fresh=*/false);
  RunResult third = e2e::run("bf-resume", "--after-batches 30 --save-freq 10 --precision bfloat16", /*fresh=*/false);
  for(const RunResult* r : {&first, &second, &third})
    ASSERT_EQ(r->status, 0) << r->log;
  auto c2 = costs(second.log), c3 = costs(third.log);
  ASSERT_EQ(c2.size(), 2u) << second.log;
  EXPECT_EQ(c2.front().first, 15);
  ASSERT_EQ(c3.size(), 2u) << third.log;
  EXPECT_EQ(c3.front().first, 25);
  EXPECT_NEAR(std::stod(c2.back().second), std::stod(a[3].second), 0.02 * std::stod(a[3].second));
}

// Two devices and two pieces an update: the devices' products read one rounded copy of the
// parameters made at the start of each update (not one per device, not one per piece); the Costs
// follow float32's on the same devices.
TEST(MixedPrecision, Bfloat16OnTwoDevicesWithDelayedUpdatesFollowsFloat32) {
  if(!hasBfloat16())
    GTEST_SKIP() << marian::cpuLacksProductType(marian::ProductType::bfloat16);
  std::string devices = "--after-batches 20 --cpu-threads 2 --sync-sgd --optimizer-delay 2";
  RunResult f32 = e2e::run("bf2-f32", devices);
  RunResult bf16 = e2e::run("bf2-bf16", devices + " --precision bfloat16 float32");
  ASSERT_EQ(f32.status, 0) << f32.log;
  ASSERT_EQ(bf16.status, 0) << bf16.log;
  auto a = costs(f32.log), b = costs(bf16.log);
  ASSERT_EQ(a.size(), 4u) << f32.log;
  ASSERT_EQ(b.size(), 4u) << bf16.log;
  for(size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(std::stod(b[i].second), std::stod(a[i].second), 0.02 * std::stod(a[i].second)) << "update " << a[i].first;
}

TEST(MixedPrecision, WhatCannotRunIsAClearError) {
  struct Case { const char* options; const char* says; };
  std::vector<Case> cases = {
      {"--precision float16 float32", "float16 products run on GPUs only"},
      {"--fp16", "--precision float16 (--fp16)"},
      {"--precision bfloat16 bfloat16", "optimization and saving run in float32"},
      {"--precision int8", "Unknown precision 'int8'"},
      {"--fp16 --precision bfloat16", "--fp16 means --precision float16 float32"},
      {"--cost-scaling 8 x", "the frequency 'x' is not a number"},
      {"--cost-scaling 8 10 0.5", "the multiplier must be >= 1"},
      {"--cost-scaling 8 --cpu-threads 2", "add --sync-sgd for 2 devices"},
  };
  if(!hasBfloat16())
    cases.push_back({"--precision bfloat16 float32", "need AVX512-BF16 or AMX-BF16"});
  for(const Case& c : cases) {
    RunResult r = e2e::run("precision-errors", std::string("--after-batches 1 ") + c.options);
    EXPECT_NE(r.status, 0) << c.options;
    EXPECT_NE(r.log.find(c.says), std::string::npos) << c.options << "\n" << r.log;
  }
}
