#pragma once
// defines: helpers of the graph-group tests on in-process ranks (test_graph_groups_in_process,
// test_local_steps_in_process): a tiny transformer's options, random batches, the singleton and
// the ranks trained on them, a checkpoint saved and resumed on any rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "common/options.h"
#include "in_process_ranks.h"
#include "training/graph_groups/graph_group.h"

namespace marian {
namespace graph_groups_in_process {

constexpr size_t kVocab = 50;

// A corpus file the options check exists; the groups are given batches directly.
inline std::string corpusFile(const std::string& side) {
  std::string path = ::testing::TempDir() + "graph_groups_in_process." + side;
  std::ofstream(path) << "a b c\n";
  return path;
}

inline Options options(const std::vector<std::string>& extra) {
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
inline Batch randomBatch(int n, unsigned seed) {
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
inline std::vector<float> singletonOnMergedBatches(const Options& o, int ranks) {
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
inline std::vector<std::vector<float>> onRanks(const Options& o, int ranks) {
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
inline void expectClose(const std::vector<float>& got, const std::vector<float>& want) {
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


// The state saved by `ranks` ranks after training updates [0, updates) on their own batches.
inline ModelState trainAndSave(const Options& o, int ranks, int updates) {
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
inline Resumed resumeOn(const Options& o, const ModelState& saved, int ranks, int from, int to) {
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
inline Options adamOptions(const std::vector<std::string>& extra) {
  std::vector<std::string> all = {"--optimizer", "adam", "--optimizer-params", "0.9", "0.98", "0.01"};
  all.insert(all.end(), extra.begin(), extra.end());
  return options(all);
}


}  // namespace graph_groups_in_process
}  // namespace marian
