// Marian's state-based learning-rate decay and what validation's stalls mean, by hand from
// Marian v1.12.43's scheduler (src/training/scheduler.h: actAfterEpoch, actAfterBatches,
// actAfterStalled; validator.h: updateStalled): --lr-decay with each --lr-decay-strategy, the
// warm-up started again, --early-stopping-epsilon, --valid-reset-stalled/-all, and the state a
// resume reads.
#include <gtest/gtest.h>

#include "options_helpers.h"
#include "training/loop/learning_rate.h"
#include "training/loop/training_state.h"
#include "training/validation/early_stopping.h"

namespace marian {
namespace {

using optionstest::parse;

// One update counted as the trainer counts it, then Marian's event.
void update(const LearningRate& lr, TrainingState& s, uint64_t labels = 10, bool first = false) {
  uint64_t before = s.labelsTotal;
  s.countUpdate(1, 1, labels);
  lr.afterUpdate(s, before, first);
}

TEST(LearningRateDecay, BatchesDecaysAtStartAndEveryFrequencyAfter) {
  LearningRate lr(parse({"--learn-rate", "1", "--lr-decay", "0.5", "--lr-decay-strategy", "batches",
                         "--lr-decay-start", "4", "--lr-decay-freq", "2"}));
  TrainingState s;
  std::vector<float> rates;  // the rate of each next update, after updates 1..9
  for(int k = 1; k <= 9; ++k) {
    update(lr, s);
    rates.push_back(lr.at(s));
  }
  // decays after updates 4, 6 and 8 (batches >= start, (batches - start) % freq == 0)
  EXPECT_EQ(rates, (std::vector<float>{1, 1, 1, 0.5f, 0.5f, 0.25f, 0.25f, 0.125f, 0.125f}));
  EXPECT_FLOAT_EQ(s.lrFactor, 0.125f);
  TrainingState epochs;
  lr.afterEpoch(epochs);  // the batches strategy ignores epochs and stalls
  lr.afterValidation(epochs, 0, 1);
  EXPECT_EQ(epochs.lrFactor, 1.f);
}

TEST(LearningRateDecay, EpochStrategiesDecayAtAnEpochsStart) {
  // epoch: from epoch START1 on, at every epoch's start
  LearningRate byEpoch(parse({"--learn-rate", "2", "--lr-decay", "0.1", "--lr-decay-strategy", "epoch",
                              "--lr-decay-start", "3"}));
  TrainingState s;
  std::vector<float> factors;
  for(int e = 2; e <= 4; ++e) {
    s.newEpoch();
    byEpoch.afterEpoch(s);
    factors.push_back(s.lrFactor);
  }
  EXPECT_FLOAT_EQ(factors[0], 1.f);  // epoch 2
  EXPECT_FLOAT_EQ(factors[1], 0.1f);
  EXPECT_FLOAT_EQ(factors[2], 0.1f * 0.1f);
  EXPECT_FLOAT_EQ(byEpoch.at(s), 2 * 0.1f * 0.1f);
  // epoch+batches: the epoch, or the updates START2, whichever comes first
  LearningRate epochBatches(parse({"--learn-rate", "1", "--lr-decay", "0.5", "--lr-decay-strategy", "epoch+batches",
                                   "--lr-decay-start", "10", "6"}));
  TrainingState b;
  for(int k = 0; k < 5; ++k)
    update(epochBatches, b);
  b.newEpoch();
  epochBatches.afterEpoch(b);
  EXPECT_EQ(b.lrFactor, 1.f);  // epoch 2, 5 updates
  update(epochBatches, b);
  b.newEpoch();
  epochBatches.afterEpoch(b);
  EXPECT_EQ(b.lrFactor, 0.5f);  // epoch 3, 6 updates
  // epoch+stalled (Marian's default strategy, starts 10 1): the most stalls in a row so far
  LearningRate epochStalled(parse({"--learn-rate", "1", "--lr-decay", "0.5"}));
  TrainingState st;
  st.newEpoch();
  epochStalled.afterEpoch(st);
  EXPECT_EQ(st.lrFactor, 1.f);
  epochStalled.afterValidation(st, 0, 1);  // one stall: noted, no decay until an epoch starts
  EXPECT_EQ(st.lrFactor, 1.f);
  EXPECT_EQ(st.maxStalled, 1u);
  epochStalled.afterValidation(st, 1, 0);  // a new best: the most stays
  st.newEpoch();
  epochStalled.afterEpoch(st);
  EXPECT_EQ(st.lrFactor, 0.5f);
  st.newEpoch();
  epochStalled.afterEpoch(st);  // and at every epoch after
  EXPECT_EQ(st.lrFactor, 0.25f);
}

TEST(LearningRateDecay, StalledDecaysAtEveryMultipleOfStart) {
  LearningRate lr(parse({"--learn-rate", "1", "--lr-decay", "0.5", "--lr-decay-strategy", "stalled",
                         "--lr-decay-start", "2"}));
  EXPECT_TRUE(lr.followsValidation());
  TrainingState s;
  std::vector<float> factors;
  for(auto [before, after] : std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 1}, {1, 2}}) {
    lr.afterValidation(s, before, after);
    factors.push_back(s.lrFactor);
  }
  EXPECT_EQ(factors, (std::vector<float>{1, 0.5f, 0.5f, 0.25f, 0.25f, 0.25f, 0.125f}));
  EXPECT_EQ(s.maxStalled, 4u);
  EXPECT_FALSE(LearningRate(parse({"--lr-decay", "0.5", "--lr-decay-strategy", "batches"})).followsValidation());
  EXPECT_FALSE(LearningRate(parse({"--lr-decay-strategy", "stalled"})).followsValidation());  // --lr-decay 0
}

// A warm-up started again moves the rate from the next event on: Marian sets the rate of the
// next update before it starts the warm-up again, so the update after the restart still has the
// old ramp's rate.
TEST(LearningRateDecay, TheWarmupStartsAgain) {
  // at a decay (--lr-decay-repeat-warmup): the ramp counts from that update, times the factor
  LearningRate repeat(parse({"--learn-rate", "1", "--lr-warmup", "10", "--lr-decay", "0.5", "--lr-decay-strategy",
                             "batches", "--lr-decay-start", "20", "--lr-decay-freq", "100", "--lr-decay-repeat-warmup"}));
  TrainingState s;
  for(int k = 0; k < 19; ++k)
    update(repeat, s);
  EXPECT_FLOAT_EQ(repeat.at(s), 1.f);
  update(repeat, s);  // update 20 decays
  EXPECT_EQ(s.warmupStart.str(), "20u");
  EXPECT_FLOAT_EQ(repeat.at(s), 0.5f);  // update 21: decayed, the old ramp's end
  update(repeat, s);
  EXPECT_FLOAT_EQ(repeat.at(s), 0.5f * 0.1f);  // update 22: 1 of 10 into the new warm-up
  for(int k = 0; k < 4; ++k)
    update(repeat, s);
  EXPECT_FLOAT_EQ(repeat.at(s), 0.5f * 0.5f);  // 5 of 10 updates into the new warm-up
  // at each period's end (--lr-warmup-cycle): a saw-tooth; in labels it passes by more than one
  LearningRate cycle(parse({"--learn-rate", "1", "--lr-warmup", "25t", "--lr-warmup-cycle"}));
  TrainingState c;
  std::vector<float> rates;
  for(int k = 0; k < 6; ++k) {
    update(cycle, c, 10);  // labels 10, 20, 30, 40, 50, 60
    rates.push_back(cycle.at(c));
  }
  // 30 passes 25: the ramp starts at 30 (from the update after next); 50 passes 50: at 50
  EXPECT_EQ(c.warmupStart.str(), "50t");
  std::vector<float> expected{0.4f, 0.8f, 1.f, 0.4f, 0.8f, 0.4f};
  for(size_t i = 0; i < rates.size(); ++i)
    EXPECT_FLOAT_EQ(rates[i], expected[i]) << i;
  // after a run's first update (--lr-warmup-at-reload), as Marian's first_
  LearningRate reload(parse({"--learn-rate", "1", "--lr-warmup", "4", "--lr-warmup-at-reload"}));
  TrainingState r;
  r.batches = 100;  // resumed there
  update(reload, r, 10, /*first=*/true);
  EXPECT_EQ(r.warmupStart.str(), "101u");
  EXPECT_FLOAT_EQ(reload.at(r), 1.f);
  update(reload, r);
  EXPECT_FLOAT_EQ(reload.at(r), 0.25f);
}

TEST(LearningRateDecay, WhatCannotBeIsAnError) {
  EXPECT_THROW(LearningRate(parse({"--lr-decay", "0.5", "--lr-decay-strategy", "epoch+stalled", "--lr-decay-start", "3"})),
               Error);
  EXPECT_THROW(LearningRate(parse({"--lr-decay", "0.5", "--lr-decay-strategy", "stalled", "--lr-decay-start"})), Error);
  EXPECT_THROW(LearningRate(parse({"--lr-warmup", "2e", "--lr-warmup-cycle"})), Error);
  EXPECT_THROW(parse({"--lr-decay-strategy", "plateau"}), Error);
  LearningRate labels(parse({"--lr-warmup", "100t"}));
  TrainingState s;
  s.warmupStart = SchedulingParameter::parse("40u", "test");
  LearningRate(parse({})).checkResumed(s);  // without a warm-up, where it started does not matter
  try {
    labels.checkResumed(s);
    FAIL() << "a warm-up restarted in updates read with --lr-warmup in labels";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("started again at 40u, which --lr-warmup 100t does not count in"),
              std::string::npos) << e.what();
  }
}

TEST(LearningRateDecay, TheProgressFileKeepsWhatTheEventsBrought) {
  TrainingState s;
  s.lrFactor = 0.25f;
  s.warmupStart = SchedulingParameter::parse("3000t", "test");
  s.rateWarmupStart = SchedulingParameter::parse("2000t", "test");
  s.maxStalled = 3;
  TrainingState back = TrainingState::parse(s.toYaml(), "p.yml");
  EXPECT_EQ(back.lrFactor, 0.25f);
  EXPECT_EQ(back.warmupStart.str(), "3000t");
  EXPECT_EQ(back.rateWarmupStart.str(), "2000t");
  EXPECT_EQ(back.maxStalled, 3u);
  std::string yaml = s.toYaml();
  for(auto [from, to, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
          {"warmup-start: 3000t", "warmup-start: 3000x", "p.yml': Option 'warmup-start': '3000x' is not a whole count"},
          {"warmup-start: 3000t", "warmup-start: t", "p.yml': Option 'warmup-start': 't' is not a whole count"},
          {"rate-warmup-start: 2000t\n", "", "key 'rate-warmup-start' is missing"},
          {"eta-factor: 0.25", "eta-factor: -1", "key 'eta-factor' must be a finite number"},
          {"eta-factor: 0.25", "eta-factor: .nan", "key 'eta-factor' must be a finite number"},
          {"stalled-max: 3\n", "", "key 'stalled-max' is missing"}}) {
    std::string bad = yaml;
    ASSERT_NE(bad.find(from), std::string::npos) << yaml;
    bad.replace(bad.find(from), from.size(), to);
    try {
      TrainingState::parse(bad, "p.yml");
      FAIL() << to;
    } catch(const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

TEST(EarlyStoppingEpsilon, ABestByLessThanEpsilonIsAStallYetTheBest) {
  // as Marian's updateStalled: the best value moves (and --keep-best keeps it), the count grows
  EarlyStopping e(parse({"--valid-metrics", "cross-entropy", "bleu", "perplexity", "--early-stopping-epsilon", "1",
                         "0.5", "--early-stopping", "2"}));
  TrainingState s;
  EXPECT_EQ(e.record({10, 20, 5}, s).size(), 3u);  // the first validation: new bests, no stall
  EXPECT_EQ(s.stalled("cross-entropy"), 0u);
  // cross-entropy 0.5 better (< 1), bleu 0.6 better (>= 0.5), perplexity 0.4 better (< 0.5, the last value)
  std::vector<std::string> best = e.record({9.5, 20.6, 4.6}, s);
  EXPECT_EQ(best, (std::vector<std::string>{"cross-entropy", "bleu", "perplexity"}));
  EXPECT_EQ(s.stalled("cross-entropy"), 1u);
  EXPECT_EQ(s.validators["cross-entropy"].lastBest, 9.5);
  EXPECT_EQ(s.stalled("bleu"), 0u);
  EXPECT_EQ(s.stalled("perplexity"), 1u);
  EXPECT_FALSE(e.stops(s));
  e.record({9.5, 20, 4.7}, s);  // the same and worse: stalls
  EXPECT_EQ(s.stalled("cross-entropy"), 2u);
  EXPECT_EQ(s.stalled("bleu"), 1u);
  EXPECT_TRUE(e.stops(s));  // the first metric, 2 times
  e.record({8, 20, 4.7}, s);  // 1.5 better: a new best that counts
  EXPECT_EQ(s.stalled("cross-entropy"), 0u);
  EXPECT_EQ(e.stalled(s), 0u);
  // Marian's count of stalls for the other --early-stopping-on: the least (all) or most (any)
  EXPECT_EQ(EarlyStopping(parse({"--valid-metrics", "cross-entropy", "bleu", "perplexity", "--early-stopping-on", "all"}))
                .stalled(s), 0u);
  EXPECT_EQ(EarlyStopping(parse({"--valid-metrics", "cross-entropy", "bleu", "perplexity", "--early-stopping-on", "any"}))
                .stalled(s), 3u);
}

TEST(EarlyStoppingEpsilon, AResumeResetsTheStallsOrEverything) {
  TrainingState s;
  s.validators["cross-entropy"] = ValidatorState{4.5, true, 3};
  s.maxStalled = 3;
  TrainingState kept = s, stalls = s, all = s;
  EarlyStopping(parse({})).resume(kept);
  EXPECT_EQ(kept.stalled("cross-entropy"), 3u);
  EarlyStopping(parse({"--valid-reset-stalled"})).resume(stalls);
  EXPECT_EQ(stalls.stalled("cross-entropy"), 0u);
  EXPECT_EQ(stalls.maxStalled, 0u);
  EXPECT_TRUE(stalls.validators["cross-entropy"].hasBest);
  EarlyStopping(parse({"--valid-reset-all"})).resume(all);
  EXPECT_FALSE(all.validators["cross-entropy"].hasBest);  // the next validation is a new best whatever it is
  EarlyStopping e(parse({}));
  EXPECT_EQ(e.record({9.0}, all).size(), 1u);
}

}  // namespace
}  // namespace marian
