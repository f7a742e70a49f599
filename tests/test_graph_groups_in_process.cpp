// The graph groups on ranks that are threads of this process (InProcessTransport), against the
// singleton: synchronous SGD on 2 ranks (dense sums, with and without buckets overlapped with
// backward) gives both ranks the same parameters, those of one device training on both ranks'
// batches as one update (--optimizer-delay's merged batch) to float rounding; the parameter
// server on one rank equals the singleton bitwise; compressed sync training keeps every rank's
// parameters the same; a checkpoint resumes on another number of ranks as the singleton trains
// on, and re-sharding it moves values without changing them.
// The same comparisons run end to end under mpirun (test_sync_allreduce_e2e, test_multinode_e2e,
// test_resume_e2e).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "common/error.h"
#include "common/options.h"
#include "in_process_ranks.h"
#include "training/graph_groups/graph_group.h"
#include "training/loop/training_state.h"
#include "graph_groups_in_process.h"

namespace marian {
namespace {

using namespace graph_groups_in_process;

TEST(GraphGroupsInProcess, SyncOnTwoRanksEqualsTheSingletonOnTheMergedBatch) {
  for(std::string buckets : {"0", "0.001"}) {  // one allreduce after backward; buckets beside it
    SCOPED_TRACE("--bucket-size " + buckets);
    // plain SGD: Adam's update is about +-lr wherever the gradient is near 0, whatever its
    // rounding, so it would turn rounding into differences of lr
    Options o = options({"--sync-sgd", "--bucket-size", buckets, "--optimizer", "sgd"});
    std::vector<float> reference = singletonOnMergedBatches(o, 2);
    std::vector<std::vector<float>> ranks = onRanks(o, 2);
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[1], ranks[0]) << "the ranks apply the same update";
    expectClose(ranks[0], reference);
  }
}

// Marian's gNorm: the norm of the gradient the optimizer steps with, per label of the update (or
// the normalized gradient's own): SGD at rate 1 without clipping moves the parameters by it.
TEST(GraphGroupsInProcess, TheGradientNormIsTheStepsOwnPerLabel) {
  for(bool normalize : {false, true}) {
    SCOPED_TRACE(normalize ? "--normalize-gradient" : "summed");
    std::vector<std::string> extra = {"--optimizer", "sgd", "--clip-norm", "0", "--cpu-threads", "2", "--sync-sgd"};
    if(normalize)
      extra.push_back("--normalize-gradient");
    auto group = createGraphGroup(options(extra), kVocab, kVocab, kSeed, nullptr);
    Batch batch = randomBatch(6, 5);
    group->initialize(batch);
    std::vector<float> before = group->values(false);
    StepStats s = group->update(batch, 0, 1.f);
    std::vector<float> after = group->values(false);
    double squares = 0;
    for(size_t i = 0; i < before.size(); ++i)
      squares += (double(after[i]) - before[i]) * (double(after[i]) - before[i]);
    double perLabel = std::sqrt(squares) / (normalize ? 1.0 : double(batch.trgWords));
    EXPECT_GT(s.gradientNorm, 0.0);
    EXPECT_NEAR(s.gradientNorm, perLabel, 1e-3 * perLabel);
  }
}

// and the display's average of it, as Marian's scheduler: over min(updates, 100) updates
TEST(GraphGroupsInProcess, TheDisplayedGradientNormIsMariansAverage) {
  TrainingState state;
  state.countUpdate(1, 1, 1);
  state.noteGradientNorm(4.f);  // the first: itself
  EXPECT_FLOAT_EQ(state.gradientNormAvg, 4.f);
  state.countUpdate(1, 1, 1);
  state.noteGradientNorm(1.f);  // alpha 2/3
  EXPECT_FLOAT_EQ(state.gradientNormAvg, 2.f);
  state.noteGradientNorm(0.f);  // none computed: unchanged
  EXPECT_FLOAT_EQ(state.gradientNormAvg, 2.f);
  state.batches = 500;
  state.noteGradientNorm(103.f);  // alpha 2/101
  EXPECT_FLOAT_EQ(state.gradientNormAvg, 2.f + 2.f / 101.f * 101.f);
}

TEST(GraphGroupsInProcess, ParameterServerOnOneRankEqualsTheSingletonBitwise) {
  std::vector<float> reference = singletonOnMergedBatches(options({}), 1);
  std::vector<std::vector<float>> ranks = onRanks(options({"--multi-node"}), 1);
  EXPECT_EQ(ranks[0], reference);
}

TEST(GraphGroupsInProcess, CompressedSyncKeepsEveryRanksParametersTheSame) {
  Options o = options({"--sync-sgd", "--sparse-allreduce", "oktopk", "--compression-density", "0.1"});
  std::vector<std::vector<float>> ranks = onRanks(o, 3);
  auto initial = createGraphGroup(o, kVocab, kVocab, kSeed, nullptr);
  initial->initialize(randomBatch(2, 99));
  std::vector<float> start = initial->values(false);
  EXPECT_EQ(ranks[1], ranks[0]);
  EXPECT_EQ(ranks[2], ranks[0]);
  EXPECT_NE(ranks[0], start) << "it trained";
}

TEST(GraphGroupsInProcess, SyncResumedOnAnotherRankCountTrainsAsTheSingletonOnTheMergedBatches) {
  Options o = adamOptions({"--sync-sgd", "--bucket-size", "0.001"});
  for(int after : {1, 3}) {
    SCOPED_TRACE("2 ranks resumed on " + std::to_string(after));
    // the singleton: updates 0 and 1 on both saved ranks' batches, 2 and 3 on the new ranks'
    auto single = createGraphGroup(o, kVocab, kVocab, kSeed, nullptr);
    single->initialize(randomBatch(2, 99));
    for(int u = 0; u < 4; ++u) {
      std::vector<Batch> parts;
      for(int r = 0; r < (u < 2 ? 2 : after); ++r)
        parts.push_back(randomBatch(4, unsigned(100 * u + r)));
      single->update(Batch::merge(parts), uint64_t(u), 0.003f);
    }
    std::vector<float> reference = single->values(false);

    ModelState saved = trainAndSave(o, 2, 2);
    EXPECT_EQ(saved.ranks, 2);
    EXPECT_FALSE(saved.optimizer.empty()) << "Adam's moments are in the checkpoint";
    Resumed resumed = resumeOn(o, saved, after, 2, 4);
    for(int r = 0; r < after; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      EXPECT_EQ(resumed.values[size_t(r)], resumed.values[0]) << "the ranks apply the same update";
      expectClose(resumed.values[size_t(r)], reference);
    }
  }
}

// Every array of a re-saved checkpoint equals the first's value for value; what the saved ranks
// or clients held back (extras named residualPrefix + a number) keeps its sum.
void expectSameState(const ModelState& again, const ModelState& saved, const std::string& residualPrefix) {
  EXPECT_EQ(again.n, saved.n);
  EXPECT_EQ(again.values, saved.values);
  EXPECT_EQ(again.smoothed, saved.smoothed);
  ASSERT_EQ(again.optimizer.size(), saved.optimizer.size());
  for(const auto& [name, array] : saved.optimizer)
    EXPECT_EQ(again.optimizer.at(name), array) << name;
  std::vector<float> before = saved.sumOfExtras(residualPrefix, 1.f), after = again.sumOfExtras(residualPrefix, 1.f);
  ASSERT_EQ(before.size(), saved.n) << "the first checkpoint holds residuals";
  double held = 0;
  for(float v : before)
    held += std::fabs(v);
  EXPECT_GT(held, 0.0) << "something was held back";
  expectClose(after, before);
}

TEST(GraphGroupsInProcess, ReshardingACheckpointMovesValuesWithoutChangingThem) {
  struct Case {
    std::string name;
    Options options;
    std::string residuals;
  };
  std::vector<Case> cases = {
      {"sync, topka", adamOptions({"--sync-sgd", "--sparse-allreduce", "topka", "--compression-density", "0.05",
                                   "--exponential-smoothing", "0.01"}),
       "allreduce-residual.rank"},
      // every rank's gradient divided by all ranks' labels: the residuals add up as the sum's
      {"sync, topka, --normalize-gradient",
       adamOptions({"--sync-sgd", "--sparse-allreduce", "topka", "--compression-density", "0.05",
                    "--normalize-gradient"}),
       "allreduce-residual.rank"},
      {"sync, PowerSGD rank 2", adamOptions({"--sync-sgd", "--sparse-allreduce", "ring", "--powersgd-rank", "2",
                                             "--powersgd-start", "1", "--exponential-smoothing", "0.01"}),
       "allreduce-residual.rank"},
      {"parameter server, dropping", adamOptions({"--multi-node", "--grad-dropping-rate", "0.9",
                                                  "--exponential-smoothing", "0.01"}),
       "dropping-residual.client"}};
  for(const Case& c : cases) {
    ModelState saved = trainAndSave(c.options, 2, 3);
    for(int after : {1, 2, 3}) {
      SCOPED_TRACE(c.name + ": 2 ranks re-saved on " + std::to_string(after));
      Resumed again = resumeOn(c.options, saved, after, 3, 3);  // no update between
      EXPECT_EQ(again.state.ranks, after);
      expectSameState(again.state, saved, c.residuals);
    }
  }
}

// How far the first update on one rank moves Adam's momentum with `saved`'s held-back errors
// (its residuals and `serverKey`'s array) against the same checkpoint without them.
std::vector<float> momentumMovedOnOneRank(const Options& o, const ModelState& saved, const std::string& serverKey) {
  ModelState forgotten = saved;
  for(auto it = forgotten.extras.begin(); it != forgotten.extras.end();)
    it = it->first.rfind("allreduce-residual", 0) == 0 || it->first == serverKey ? forgotten.extras.erase(it) : std::next(it);
  Resumed with = resumeOn(o, saved, 1, 3, 4), without = resumeOn(o, forgotten, 1, 3, 4);
  std::vector<float> m = with.state.optimizer.at("adam_mt");
  const std::vector<float>& mWithout = without.state.optimizer.at("adam_mt");
  for(size_t i = 0; i < m.size(); ++i)
    m[i] -= mWithout[i];
  return m;
}

// A 1-bit Adam checkpoint of 2 ranks resumed on one, which does not compress: the mean of the
// saved workers' errors plus the servers' join the next momentum, as error feedback would have
// added them; saved again before an update, they are owed as they were (in the checkpoint's
// units: momentum).
TEST(GraphGroupsInProcess, OneBitAdamCheckpointResumedOnOneRankOwesItsErrorsToTheMomentum) {
  Options o = adamOptions({"--sync-sgd", "--sparse-allreduce", "ring", "--onebit-adam",
                           "--adam-freeze-variance-after", "1", "--clip-norm", "0"});  // nothing scales the gradient
  ModelState saved = trainAndSave(o, 2, 3);
  std::vector<float> owed = saved.sumOfExtras("allreduce-residual.rank", 0.5f);
  const std::vector<float>& server = saved.extras.at("onebit-server-error");
  ASSERT_EQ(owed.size(), saved.n);
  double held = 0;
  for(size_t i = 0; i < owed.size(); ++i) {
    owed[i] += server[i];
    held += std::fabs(owed[i]);
  }
  ASSERT_GT(held, 0.0) << "the saved ranks held errors back";
  expectClose(momentumMovedOnOneRank(o, saved, "onebit-server-error"), owed);

  Resumed again = resumeOn(o, saved, 1, 3, 3);
  std::vector<float> owedAgain = again.state.sumOfExtras("allreduce-residual.rank", 1.f);
  const std::vector<float>& serverAgain = again.state.extras.at("onebit-server-error");
  for(size_t i = 0; i < owedAgain.size(); ++i)
    owedAgain[i] += serverAgain[i];
  expectClose(owedAgain, owed);
}

// 0/1 Adam saved in its 1-bit gradient phase (update 1 of 0-2 in 1 bit, the variance changing on
// steps 1 and 3), resumed on one rank: its errors are gradients owed to the sum, the workers' once
// and the servers' twice (2 ranks, the sum twice the mean they correct), so the first momentum on
// one rank moves by (1 - beta1) times them.
TEST(GraphGroupsInProcess, ZeroOneAdamCheckpointResumedOnOneRankOwesItsGradientErrors) {
  Options o = adamOptions({"--sync-sgd", "--sparse-allreduce", "ring", "--zero-one-adam", "--adam-freeze-variance-after",
                           "100", "--adam-variance-update-scaler", "1", "--clip-norm", "0"});
  ModelState saved = trainAndSave(o, 2, 3);
  ASSERT_EQ(saved.extras.count("onebit-server-error"), 0u) << "gradient errors, not the momentum's";
  std::vector<float> owed = saved.sumOfExtras("allreduce-residual.rank", 1.f);
  const std::vector<float>& server = saved.extras.at("zero-one-server-error");
  ASSERT_EQ(owed.size(), saved.n);
  double held = 0;
  for(size_t i = 0; i < owed.size(); ++i) {
    owed[i] = 0.1f * (owed[i] + 2.f * server[i]);  // 1 - beta1
    held += std::fabs(owed[i]);
  }
  ASSERT_GT(held, 0.0) << "the saved ranks held errors back";
  expectClose(momentumMovedOnOneRank(o, saved, "zero-one-server-error"), owed);
}

}  // namespace
}  // namespace marian

