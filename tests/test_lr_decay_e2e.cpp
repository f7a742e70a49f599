// Marian's --lr-decay end to end on the synthetic corpus: the rate of each update and Marian's
// log lines, a resume that goes on with the decay where the uninterrupted run did, and ranks in
// lockstep that take the decay rank 0's validation brought (in one process and under mpirun).
// The schedules by hand are in test_learning_rate.cpp.
#include "e2e_helpers.h"

namespace {

using e2e::rates;
using e2e::readFile;
using e2e::RunResult;

const std::string kByBatches = " --disp-freq 1 --lr-report --lr-decay 0.5 --lr-decay-strategy batches "
                               "--lr-decay-start 4 --lr-decay-freq 3 ";

TEST(LrDecay, BatchesDecayTheRateAndAResumeGoesOnWithIt) {
  RunResult whole = e2e::run("lr-decay-whole", kByBatches + "--after-batches 9");
  ASSERT_EQ(whole.status, 0) << whole.log;
  // the rate of the next update on each line, as Marian's: halved after updates 4 and 7
  std::vector<std::pair<int, std::string>> expected{
      {1, "3.0000e-03"}, {2, "3.0000e-03"}, {3, "3.0000e-03"}, {4, "1.5000e-03"}, {5, "1.5000e-03"},
      {6, "1.5000e-03"}, {7, "7.5000e-04"}, {8, "7.5000e-04"}, {9, "7.5000e-04"}};
  EXPECT_EQ(rates(whole.log), expected) << whole.log;
  EXPECT_NE(whole.log.find("] Decaying learning rate to 0.0015 after 4 batches\n"), std::string::npos) << whole.log;
  EXPECT_NE(whole.log.find("] Decaying learning rate to 0.00075 after 7 batches\n"), std::string::npos) << whole.log;
  std::string m = e2e::corpusDir() + "/lr-decay-resumed";
  ASSERT_EQ(e2e::run("lr-decay-resumed", kByBatches + "--after-batches 5").status, 0);
  EXPECT_NE(readFile(m + "/model.npz.progress.yml").find("eta-factor: 0.5\n"), std::string::npos);
  RunResult resumed = e2e::run("lr-decay-resumed", kByBatches + "--after-batches 9", /*fresh=*/false);
  ASSERT_EQ(resumed.status, 0) << resumed.log;
  using Lines = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(rates(resumed.log), Lines(expected.begin() + 5, expected.end())) << resumed.log;
  std::vector<std::pair<int, std::string>> wholeCosts = e2e::costs(whole.log);
  ASSERT_EQ(wholeCosts.size(), 9u) << whole.log;
  EXPECT_EQ(e2e::costs(resumed.log), Lines(wholeCosts.begin() + 5, wholeCosts.end()));
  // a resume with --lr-warmup-at-reload warms up again after its first update (update 10, which
  // also decays the rate to 3.75e-4); as in Marian, the update after it still has the old ramp's
  // rate, the warm-up's start rate the one after that
  RunResult rewarm = e2e::run("lr-decay-resumed", kByBatches + "--after-batches 12 --lr-warmup 2 --lr-warmup-at-reload",
                              /*fresh=*/false);
  ASSERT_EQ(rewarm.status, 0) << rewarm.log;
  EXPECT_NE(rewarm.log.find("] Restarting learning rate warmup\n"), std::string::npos) << rewarm.log;
  std::vector<std::pair<int, std::string>> warm = rates(rewarm.log);
  ASSERT_EQ(warm.size(), 3u) << rewarm.log;
  EXPECT_EQ(warm[0], std::make_pair(10, std::string("3.7500e-04")));
  EXPECT_EQ(warm[1], std::make_pair(11, std::string("1.8750e-04")));  // half of --lr-warmup 2
  EXPECT_EQ(warm[2], std::make_pair(12, std::string("3.7500e-04")));
}

// --lr-decay-reset-optimizer resets Adam at each decay, and a resume across a reset goes on as the
// run did; --no-optimizer-reload resumes the weights with new optimizer statistics (as Marian's:
// bench/trajectory-vs-marian compares both with real Marian's Costs). Modes whose optimizers
// cannot all reset at one update are refused.
TEST(LrDecay, OptimizerResetsAtADecayAndOnAResume) {
  std::string reset = kByBatches + "--lr-decay-reset-optimizer ";
  RunResult whole = e2e::run("lr-reset-whole", reset + "--after-batches 9");
  ASSERT_EQ(whole.status, 0) << whole.log;
  EXPECT_NE(whole.log.find("] Decaying learning rate to 0.0015 after 4 batches\n"), std::string::npos) << whole.log;
  EXPECT_NE(whole.log.find("] Resetting optimizer statistics\n"), std::string::npos) << whole.log;
  RunResult kept = e2e::run("lr-reset-kept", kByBatches + "--after-batches 9");
  ASSERT_EQ(kept.status, 0) << kept.log;
  std::vector<std::pair<int, std::string>> wholeCosts = e2e::costs(whole.log), keptCosts = e2e::costs(kept.log);
  ASSERT_EQ(wholeCosts.size(), 9u);
  ASSERT_EQ(keptCosts.size(), 9u);
  EXPECT_EQ(wholeCosts[4], keptCosts[4]);  // update 5: the reset's weights are the same
  EXPECT_NE(wholeCosts[5], keptCosts[5]);  // update 6 follows a new Adam's first step
  ASSERT_EQ(e2e::run("lr-reset-resumed", reset + "--after-batches 5").status, 0);
  RunResult resumed = e2e::run("lr-reset-resumed", reset + "--after-batches 9", /*fresh=*/false);
  ASSERT_EQ(resumed.status, 0) << resumed.log;
  using Lines = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(e2e::costs(resumed.log), Lines(wholeCosts.begin() + 5, wholeCosts.end()));
  // --no-optimizer-reload: the first update after it has the saved weights, the next a new Adam's step
  ASSERT_EQ(e2e::run("no-optimizer-reload", " --disp-freq 1 --after-batches 5").status, 0);
  RunResult fresh = e2e::run("no-optimizer-reload", " --disp-freq 1 --after-batches 7 --no-optimizer-reload", false);
  ASSERT_EQ(fresh.status, 0) << fresh.log;
  EXPECT_NE(fresh.log.find("] --no-optimizer-reload is specified, we are skipping optimizer state restoration\n"),
            std::string::npos) << fresh.log;
  // as Marian's, the resume reads no optimizer state: another --optimizer resumes too
  RunResult other = e2e::run("no-optimizer-reload", " --disp-freq 1 --after-batches 8 --no-optimizer-reload "
                                                    "--optimizer adagrad", false);
  EXPECT_EQ(other.status, 0) << other.log;
  RunResult plain = e2e::run("optimizer-reloaded", " --disp-freq 1 --after-batches 7");
  ASSERT_EQ(plain.status, 0) << plain.log;
  std::vector<std::pair<int, std::string>> freshCosts = e2e::costs(fresh.log), plainCosts = e2e::costs(plain.log);
  ASSERT_EQ(freshCosts.size(), 2u) << fresh.log;
  ASSERT_EQ(plainCosts.size(), 7u) << plain.log;
  EXPECT_EQ(freshCosts[0], plainCosts[5]);
  EXPECT_NE(freshCosts[1], plainCosts[6]);
  // asynchronous devices each keep their own optimizer's steps: refused
  RunResult async = e2e::run("lr-reset-async", reset + "--after-batches 2 --cpu-threads 2");
  EXPECT_NE(async.status, 0);
  EXPECT_NE(async.log.find("--lr-decay-reset-optimizer resets the optimizer's statistics, which needs synchronous "
                           "training"), std::string::npos) << async.log;
}

// A resume counts the stalls on (their count is in the progress file), starts them again with
// --valid-reset-stalled, and with --valid-reset-all also forgets the best values.
TEST(LrDecay, AResumeCountsTheStallsOnOrStartsThemAgain) {
  std::string common = e2e::validation() + " --valid-freq 2 --early-stopping-epsilon 1e9 --early-stopping 20 ";
  for(auto [flag, verdict] : std::vector<std::pair<std::string, std::string>>{
          {"", " : stalled 3 times (last best: "}, {"--valid-reset-stalled", " : stalled 1 times (last best: "},
          {"--valid-reset-all", " : new best"}}) {
    std::string name = "valid-reset" + flag;
    ASSERT_EQ(e2e::run(name, common + "--after-batches 6").status, 0);
    RunResult resumed = e2e::run(name, common + "--after-batches 8 " + flag, /*fresh=*/false);
    ASSERT_EQ(resumed.status, 0) << resumed.log;
    size_t at = resumed.log.find("[valid] Ep. 1 : Up. 8 : cross-entropy : ");
    ASSERT_NE(at, std::string::npos) << resumed.log;
    EXPECT_NE(resumed.log.substr(at, resumed.log.find('\n', at) - at).find(verdict), std::string::npos)
        << flag << "\n" << resumed.log;
  }
}

// Only rank 0 validates; with --lr-decay-strategy stalled every rank must take the rate its
// validation decayed to. A huge --early-stopping-epsilon makes every validation after the first a
// stall, so validating every 3 updates decays after updates 6 and 9 (and once more at the final
// validation after update 10, which every rank takes part in too): the Costs of a run that decays
// by batches at those updates. Every rank resets its optimizer's statistics with the decay.
TEST(LrDecay, RanksTakeTheDecayOfRankZerosStalls) {
  std::string common = e2e::validation() + " --sync-sgd --valid-freq 3 --after-batches 10 --disp-freq 1 "
                                           "--lr-report --lr-decay-reset-optimizer --early-stopping 20 ";
  // (under mpirun a factor of 1: the ranks reset with rank 0's decay though the rate stays)
  for(std::string launch : {std::string("in-process"), std::string("mpirun")}) {
    std::string factor = launch == "mpirun" ? " --lr-decay 1 " : " --lr-decay 0.5 ";
    std::string ranks = launch == "mpirun" ? "" : " --ranks-in-process 2";
    std::string launcher = launch == "mpirun" ? e2e::mpirun(2) : "";
    RunResult stalled = e2e::run("lr-decay-stalled-" + launch,
                                 common + factor + ranks + " --lr-decay-strategy stalled --lr-decay-start 1 "
                                                           "--early-stopping-epsilon 1e9", true, launcher);
    RunResult batches = e2e::run("lr-decay-batches-" + launch,
                                 common + factor + ranks + " --lr-decay-strategy batches --lr-decay-start 6 --lr-decay-freq 3",
                                 true, launcher);
    ASSERT_EQ(stalled.status, 0) << stalled.log;
    ASSERT_EQ(batches.status, 0) << batches.log;
    std::string rate = launch == "mpirun" ? "0.003" : "0.00075";
    EXPECT_NE(stalled.log.find("] Decaying learning rate to " + rate + " after having stalled 2 time(s)\n"),
              std::string::npos) << stalled.log;
    EXPECT_NE(stalled.log.find(" : cross-entropy : "), std::string::npos) << stalled.log;
    EXPECT_NE(stalled.log.find(" : stalled 3 times (last best: "), std::string::npos) << stalled.log;
    std::vector<std::pair<int, std::string>> costs = e2e::costs(stalled.log);
    ASSERT_EQ(costs.size(), 10u) << stalled.log;
    EXPECT_EQ(costs, e2e::costs(batches.log)) << launch;
    EXPECT_EQ(e2e::validCE(stalled.log), e2e::validCE(batches.log)) << launch;
    EXPECT_NE(readFile(e2e::corpusDir() + "/lr-decay-stalled-" + launch + "/model.npz.progress.yml")
                  .find("stalled-max: 3\n"), std::string::npos);
  }
  // asynchronous ranks do not share rank 0's validation: an error names why
  RunResult async = e2e::run("lr-decay-stalled-async", e2e::validation() + " --multi-node --after-batches 2 "
                                                       "--lr-decay 0.5 --lr-decay-strategy stalled", true,
                             e2e::mpirun(2));
  EXPECT_NE(async.status, 0);
  EXPECT_NE(async.log.find("--lr-decay-strategy stalled decays when validation stalls, which rank 0 alone runs"),
            std::string::npos) << async.log;
}

}  // namespace
