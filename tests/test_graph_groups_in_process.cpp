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

namespace marian {
namespace {

constexpr size_t kVocab = 50;

// A corpus file the options check exists; the groups are given batches directly.
std::string corpusFile(const std::string& side) {
  std::string path = ::testing::TempDir() + "graph_groups_in_process." + side;
  std::ofstream(path) << "a b c\n";
  return path;
}

Options options(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"marian", "--type", "transformer", "--dim-emb", "16", "--transformer-dim-ffn",
                                   "32", "--transformer-heads", "2", "--enc-depth", "1", "--dec-depth", "1",
                                   "--transformer-dropout", "0", "--label-smoothing", "0.1", "--cost-type", "ce-sum",
                                   "--learn-rate", "0.003", "--cpu-threads", "1", "--seed", "5",
                                   "--train-sets", corpusFile("src"), corpusFile("trg"), "--model", "unused.npz"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for(const auto& a : args)
    argv.push_back(a.c_str());
  return parseOptions(int(argv.size()), argv.data(), ProgramMode::training).options;
}

// n sentences of random words (ids 2 .. kVocab-1, </s> last), lengths between 3 and 7
Batch randomBatch(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> src, trg;
  auto sentence = [&] {
    std::vector<int> s(3 + rng() % 5);
    for(int& w : s)
      w = int(2 + rng() % (kVocab - 2));
    s.back() = 0;
    return s;
  };
  Batch b;
  int srcLen = 0, trgLen = 0;
  for(int i = 0; i < n; ++i) {
    src.push_back(sentence());
    trg.push_back(sentence());
    srcLen = std::max(srcLen, int(src.back().size()));
    trgLen = std::max(trgLen, int(trg.back().size()));
  }
  b.sentences = n;
  b.srcLen = srcLen;
  b.trgLen = trgLen;
  b.srcIds.assign(size_t(n * srcLen), 0);
  b.trgIds.assign(size_t(n * trgLen), 0);
  b.srcMask.assign(size_t(n * srcLen), 0.f);
  b.trgMask.assign(size_t(n * trgLen), 0.f);
  for(int i = 0; i < n; ++i) {
    for(size_t t = 0; t < src[i].size(); ++t) {
      b.srcIds[size_t(i * srcLen) + t] = src[i][t];
      b.srcMask[size_t(i * srcLen) + t] = 1.f;
    }
    for(size_t t = 0; t < trg[i].size(); ++t) {
      b.trgIds[size_t(i * trgLen) + t] = trg[i][t];
      b.trgMask[size_t(i * trgLen) + t] = 1.f;
    }
    b.srcWords += src[i].size();
    b.trgWords += trg[i].size();
  }
  return b;
}

constexpr uint64_t kSeed = 7;
constexpr int kUpdates = 4;

// The singleton on the batches of every rank, merged into one update each.
std::vector<float> singletonOnMergedBatches(const Options& o, int ranks) {
  auto group = createGraphGroup(o, kVocab, kVocab, kSeed, nullptr);
  group->initialize(randomBatch(2, 99));
  for(int u = 0; u < kUpdates; ++u) {
    std::vector<Batch> parts;
    for(int r = 0; r < ranks; ++r)
      parts.push_back(randomBatch(4, unsigned(100 * u + r)));
    group->update(Batch::merge(parts), uint64_t(u), 0.003f);
  }
  group->finish();
  return group->values(false);
}

// Every rank trains on its own batches; what each rank holds at the end.
std::vector<std::vector<float>> onRanks(const Options& o, int ranks) {
  std::vector<std::vector<float>> values(static_cast<size_t>(ranks));
  runOnRanks(ranks, [&](Transport& t) {
    auto group = createGraphGroup(o, kVocab, kVocab, kSeed, &t);
    group->initialize(randomBatch(2, 99));
    for(int u = 0; u < kUpdates; ++u)
      group->update(randomBatch(4, unsigned(100 * u + t.rank())), uint64_t(u), 0.003f);
    group->finish();
    values[size_t(t.rank())] = group->values(false);
  });
  return values;
}

// The same gradients summed in another order (the singleton's backward adds the second batch's
// uses of a parameter one by one into the first's sum; the ranks add two whole sums): equal to
// float rounding, as test_train_e2e's SyncOverTwoDevicesMatchesOneDevice.
void expectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  size_t off = 0;
  double worst = 0;
  for(size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs(double(got[i]) - double(want[i]));
    worst = std::max(worst, d);
    off += d > 1e-5 + 1e-4 * std::fabs(double(want[i]));
  }
  EXPECT_EQ(off, 0u) << "values apart; the largest difference " << worst;
}

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

// The state saved by `ranks` ranks after training updates [0, updates) on their own batches.
ModelState trainAndSave(const Options& o, int ranks, int updates) {
  ModelState saved;
  runOnRanks(ranks, [&](Transport& t) {
    auto group = createGraphGroup(o, kVocab, kVocab, kSeed, &t);
    group->initialize(randomBatch(2, 99));
    for(int u = 0; u < updates; ++u) {
      uint64_t jobLabels = 0;  // every rank's, as the trainer's agreement gives them (--normalize-gradient)
      for(int r = 0; r < ranks; ++r)
        jobLabels += randomBatch(4, unsigned(100 * u + r)).trgWords;
      group->update(randomBatch(4, unsigned(100 * u + t.rank())), uint64_t(u), 0.003f, jobLabels);
    }
    group->finish();
    ModelState state = group->saveState();  // collective; rank 0's holds everything
    if(t.rank() == 0)
      saved = std::move(state);
  });
  return saved;
}

// `saved` restored on `ranks` ranks, trained on updates [from, to) and saved again: the values of
// every rank (values[r]) and rank 0's state.
struct Resumed {
  std::vector<std::vector<float>> values;
  ModelState state;
};
Resumed resumeOn(const Options& o, const ModelState& saved, int ranks, int from, int to) {
  Resumed out;
  out.values.resize(size_t(ranks));
  runOnRanks(ranks, [&](Transport& t) {
    auto group = createGraphGroup(o, kVocab, kVocab, kSeed, &t);
    group->initialize(randomBatch(2, 99));
    group->restoreState(saved);
    for(int u = from; u < to; ++u)
      group->update(randomBatch(4, unsigned(100 * u + t.rank())), uint64_t(u), 0.003f);
    group->finish();
    out.values[size_t(t.rank())] = group->values(false);
    ModelState state = group->saveState();
    if(t.rank() == 0)
      out.state = std::move(state);
  });
  return out;
}

// Adam, with an epsilon large enough that a gradient near 0 moves its parameter by about
// lr x g / eps, not by +-lr whatever its rounding: the optimizer state travels and the
// comparison with the singleton holds to float rounding.
Options adamOptions(const std::vector<std::string>& extra) {
  std::vector<std::string> all = {"--optimizer", "adam", "--optimizer-params", "0.9", "0.98", "0.01"};
  all.insert(all.end(), extra.begin(), extra.end());
  return options(all);
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
  ModelState forgotten = saved;
  for(auto it = forgotten.extras.begin(); it != forgotten.extras.end();)
    it = it->first.rfind("allreduce-residual", 0) == 0 || it->first == "onebit-server-error" ? forgotten.extras.erase(it)
                                                                                              : std::next(it);
  Resumed with = resumeOn(o, saved, 1, 3, 4), without = resumeOn(o, forgotten, 1, 3, 4);
  std::vector<float> m = with.state.optimizer.at("adam_mt"), mWithout = without.state.optimizer.at("adam_mt");
  for(size_t i = 0; i < m.size(); ++i)
    m[i] -= mWithout[i];
  expectClose(m, owed);

  Resumed again = resumeOn(o, saved, 1, 3, 3);
  std::vector<float> owedAgain = again.state.sumOfExtras("allreduce-residual.rank", 1.f);
  const std::vector<float>& serverAgain = again.state.extras.at("onebit-server-error");
  for(size_t i = 0; i < owedAgain.size(); ++i)
    owedAgain[i] += serverAgain[i];
  expectClose(owedAgain, owed);
}

}  // namespace
}  // namespace marian

namespace marian {
namespace {

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
