// Local steps (--local-steps, DiLoCo's outer step) on ranks that are threads of this process:
// each rank trains alone between the rounds, then every rank takes the outer step of their
// mean; streamed fragments on one and two devices a rank; the variance of the ranks' mean; what
// local steps refuse; and a resume mid-round and on another rank count.
#include "graph_groups_in_process.h"

namespace marian {
namespace {

using namespace graph_groups_in_process;

// Each rank's values after every update of `updates`, training on its own batches.
std::vector<std::vector<std::vector<float>>> valuesPerUpdate(const Options& o, int ranks, int updates) {
  std::vector<std::vector<std::vector<float>>> values(static_cast<size_t>(ranks));  // [rank][update]
  runOnRanks(ranks, [&](Transport& t) {
    auto group = createGraphGroup(o, kVocab, kVocab, kSeed, &t);
    group->initialize(randomBatch(2, 99));
    for(int u = 0; u < updates; ++u) {
      group->update(randomBatch(4, unsigned(100 * u + t.rank())), uint64_t(u), 0.003f);
      values[size_t(t.rank())].push_back(group->values(false));
    }
  });
  return values;
}

TEST(GraphGroupsInProcess, LocalStepsTrainEachRankAloneThenTakeTheOuterStepOfTheirMean) {
  Options o = options({"--sync-sgd", "--optimizer", "sgd", "--local-steps", "2"});  // Nesterov, 0.7, 0.9
  auto initial = createGraphGroup(o, kVocab, kVocab, kSeed, nullptr);
  initial->initialize(randomBatch(2, 99));
  std::vector<float> start = initial->values(false);
  // each rank alone: one device training on that rank's batches
  std::vector<std::vector<std::vector<float>>> alone(2);
  for(int r = 0; r < 2; ++r) {
    auto single = createGraphGroup(o, kVocab, kVocab, kSeed, nullptr);
    single->initialize(randomBatch(2, 99));
    for(int u = 0; u < 2; ++u) {
      single->update(randomBatch(4, unsigned(100 * u + r)), uint64_t(u), 0.003f);
      alone[size_t(r)].push_back(single->values(false));
    }
  }
  std::vector<std::vector<std::vector<float>>> ranks = valuesPerUpdate(o, 2, 2);
  // update 0 is inside the round: each rank as if alone
  for(int r = 0; r < 2; ++r)
    expectClose(ranks[size_t(r)][0], alone[size_t(r)][0]);
  EXPECT_NE(ranks[0][0], ranks[1][0]);
  // update 1 ends it: start - 0.7 (g + 0.9 g) with g = start - the ranks' mean (the first momentum is g)
  std::vector<float> outer(start.size());
  for(size_t i = 0; i < start.size(); ++i) {
    double g = double(start[i]) - 0.5 * (double(alone[0][1][i]) + double(alone[1][1][i]));
    outer[i] = float(double(start[i]) - 0.7 * 1.9 * g);
  }
  EXPECT_EQ(ranks[1][1], ranks[0][1]) << "every rank starts the next round from the outer step";
  expectClose(ranks[0][1], outer);
}

// Streamed local steps read and write each fragment in the shards that hold it: with 2 devices
// per rank a fragment crosses the devices' shards, and every update (fragments sent after updates
// 1, 2 and 4 of each round of 4, merged one update later) gives what 1 device per rank gives.
TEST(GraphGroupsInProcess, StreamedLocalStepsGiveTheSameOnOneAndTwoDevicesPerRank) {
  std::vector<std::string> streamed = {"--sync-sgd", "--local-steps", "4", "--outer-fragments", "3", "--outer-delay", "1"};
  std::vector<std::string> twoDevices = streamed;
  twoDevices.insert(twoDevices.end(), {"--cpu-threads", "2"});
  std::vector<std::vector<std::vector<float>>> one = valuesPerUpdate(adamOptions(streamed), 2, 6),
                                               two = valuesPerUpdate(adamOptions(twoDevices), 2, 6);
  for(int r = 0; r < 2; ++r)
    for(int u = 0; u < 6; ++u) {
      SCOPED_TRACE("rank " + std::to_string(r) + ", update " + std::to_string(u));
      expectClose(two[size_t(r)][size_t(u)], one[size_t(r)][size_t(u)]);
    }
  EXPECT_NE(one[0][5], one[1][5]) << "the ranks' own steps since the last merges";
}

// --local-adam-variance mean on 3 ranks: each rank's Adam divides by the second moment of the
// mean of 3 ranks' gradients. Its first step is Adam's own (m^2 = v); at the second, inside the
// round and from the same moments, every value moves between 1 and sqrt(3) times as far as with
// its own variance, and the values whose gradient turned (m^2 far below v) nearly sqrt(3) times:
// the rank count reached the optimizer, not 1 or the devices. (Only the values whose first step
// was a whole one, a gradient far above Adam's epsilon: the others' gradients are rounding
// residues that differ between runs.)
TEST(GraphGroupsInProcess, LocalStepsWithTheVarianceOfTheRanksMeanStepUpToSqrtRanksFarther) {
  std::vector<std::string> local = {"--sync-sgd", "--local-steps", "4", "--optimizer", "adam", "--optimizer-params",
                                    "0.9", "0.98", "1e-9"};
  std::vector<std::string> mean = local;
  mean.insert(mean.end(), {"--local-adam-variance", "mean"});
  std::vector<std::vector<std::vector<float>>> own = valuesPerUpdate(options(local), 3, 2),
                                               ofMean = valuesPerUpdate(options(mean), 3, 2);
  std::vector<float> start;
  {
    auto initial = createGraphGroup(options(local), kVocab, kVocab, kSeed, nullptr);
    initial->initialize(randomBatch(2, 99));
    start = initial->values(false);
  }
  for(size_t r = 0; r < 3; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expectClose(ofMean[r][0], own[r][0]);  // the first step is Adam's own (to rounding: m^2 = v)
    double whole = 0;                       // the learning rate: Adam's first step where |g| >> epsilon
    for(size_t i = 0; i < start.size(); ++i)
      whole = std::max(whole, std::fabs(double(own[r][0][i]) - double(start[i])));
    double largest = 0;
    size_t compared = 0;
    for(size_t i = 0; i < start.size(); ++i) {
      if(std::fabs(double(own[r][0][i]) - double(start[i])) < 0.99 * whole)
        continue;
      ++compared;
      double stepOwn = double(own[r][1][i]) - double(own[r][0][i]);
      double stepMean = double(ofMean[r][1][i]) - double(ofMean[r][0][i]);
      // the steps are differences of floats: within a few of their spacings
      double spacing = 4 * double(std::numeric_limits<float>::epsilon()) *
                       std::max({std::fabs(own[r][0][i]), std::fabs(own[r][1][i]), std::fabs(ofMean[r][1][i])});
      double along = stepMean * (stepOwn > 0 ? 1 : -1);  // the mean's step in the direction of Adam's own
      ASSERT_GE(along, std::fabs(stepOwn) - spacing) << "value " << i << ": " << stepMean << " against " << stepOwn;
      ASSERT_LE(along, std::sqrt(3.0) * std::fabs(stepOwn) + 3 * spacing)
          << "value " << i << ": " << stepMean << " against " << stepOwn;
      if(std::fabs(stepOwn) > 1e-5)
        largest = std::max(largest, stepMean / stepOwn);
    }
    EXPECT_GT(compared, start.size() / 10);
    EXPECT_GT(largest, 1.65) << "no value moved about sqrt(3) times as far";
  }
}

TEST(GraphGroupsInProcess, LocalStepsRefuseWhatTheyCannotTrainWith) {
  auto refusal = [](const std::vector<std::string>& extra) {
    try {
      createGraphGroup(options(extra), kVocab, kVocab, kSeed, nullptr);
    } catch(const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refusal({"--local-steps", "4", "--multi-node"}).find("not with the parameter server"), std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--cpu-threads", "2"}).find("--local-steps trains with --sync-sgd"),
            std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--sync-sgd", "--compression-density", "0.1"}).find("no gradient compression"),
            std::string::npos);
  EXPECT_NE(refusal({"--outer-quantize-bits", "8"}).find("--local-steps, which is off"), std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--outer-quantize-bits", "3"}).find("8, 4, 2, 1, or 0"), std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--outer-quantize-bits", "4", "--outer-density", "0.1"})
                .find("in 1 or 2 bits (--outer-quantize-bits 1 or 2), or whole (0), not in 4"),
            std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--outer-density", "0.1", "--outer-error-decay", "0.9"})
                .find("--outer-error-decay decays what"),
            std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--outer-density", "0.1", "--sparse-allreduce", "oktopk"})
                .find("keeps only a selection of the sum"),
            std::string::npos);
  EXPECT_NE(refusal({"--outer-fragments", "2"}).find("--local-steps, which is off"), std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--sync-sgd", "--outer-fragments", "5"}).find("from 1 to the local steps"),
            std::string::npos);
  EXPECT_NE(refusal({"--local-steps", "4", "--sync-sgd", "--outer-delay", "4"}).find("less than the local steps"),
            std::string::npos);
}

TEST(GraphGroupsInProcess, LocalStepsResumeExactlyMidRoundAndOnAnotherRankCount) {
  Options o = adamOptions({"--sync-sgd", "--local-steps", "2"});
  // rounds end after updates 1 and 3: the checkpoint after 3 updates is in the middle of the second
  ModelState saved = trainAndSave(o, 2, 3);
  for(const char* extra : {"outer-start", "outer-momentum", "replica.rank0.values", "replica.rank1.values",
                           "replica.rank1.adam_mt"})
    EXPECT_EQ(saved.extras.count(extra), 1u) << extra;
  std::vector<std::vector<std::vector<float>>> uninterrupted = valuesPerUpdate(o, 2, 6);
  Resumed resumed = resumeOn(o, saved, 2, 3, 6);
  for(int r = 0; r < 2; ++r)
    expectClose(resumed.values[size_t(r)], uninterrupted[size_t(r)][5]);
  // on 3 ranks: every rank from the ranks' mean, the outer state as saved
  Resumed three = resumeOn(o, saved, 3, 3, 3);
  for(int r = 0; r < 3; ++r)
    EXPECT_EQ(three.values[size_t(r)], saved.values) << "rank " << r;
  EXPECT_EQ(three.state.extras.at("outer-start"), saved.extras.at("outer-start"));
  EXPECT_EQ(three.state.extras.at("outer-momentum"), saved.extras.at("outer-momentum"));
}

}  // namespace
}  // namespace marian
