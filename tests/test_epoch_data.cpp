// EpochData's position in an epoch of a corpus in memory: recorded into the training state,
// read back from its YAML, and resumed: exactly at the batch when the epoch is cut into batches
// as before; after as many sentences as were trained when the batching options changed (the
// saved batch count would be another place in the epoch), or another --max-length kept other pairs.
#include <gtest/gtest.h>

#include "data/corpus.h"
#include "data/vocab.h"
#include "data_files.h"
#include "training/loop/epoch_data.h"

namespace marian {
namespace {

std::string temp(const std::string& name) { return testdata::temp("marian_epoch_data_", name); }

constexpr size_t kPairs = 1003;    // 2-14 tokens a side with </s>
constexpr size_t kMaxLength = 50;  // keeps every pair

std::unique_ptr<Corpus> makeCorpus(size_t maxLength = kMaxLength) {
  std::string src, trg;
  for(size_t i = 0; i < kPairs; ++i) {
    for(size_t j = 0; j <= (i * 7) % 13; ++j) {
      src += "w" + std::to_string((i + j) % 20) + " ";
      trg += "v" + std::to_string((i * j) % 20) + " ";
    }
    src += "\n";
    trg += "\n";
  }
  testdata::write(temp("c.src"), src);
  testdata::write(temp("c.trg"), trg);
  std::remove(temp("v.yml").c_str());
  auto v = loadOrCreateVocab(temp("v.yml"), {temp("c.src"), temp("c.trg")}, 0);
  return std::make_unique<Corpus>(std::vector<std::string>{temp("c.src"), temp("c.trg")},
                                  std::vector<std::shared_ptr<Vocab>>{v, v}, maxLength);
}

// How the epochs of makeCorpus(maxLength) cut with `o` are recorded.
std::string cutOf(const EpochDataOptions& o, size_t maxLength = kMaxLength) {
  return EpochData::epochCut(o.batching, PairEncoder{{}, maxLength});
}

EpochDataOptions withMiniBatch(size_t sentences) {
  EpochDataOptions o;
  o.batching.miniBatch = sentences;
  o.batching.maxiBatch = 10;
  o.batching.seed = 7;
  return o;
}

// Trains `batches` batches of epoch 1 as the trainer counts them, from `state` (a resume) or the
// epoch's start; returns the state it saves (through its YAML, as a resume reads it) and the
// sentences trained.
TrainingState trainAndSave(const EpochDataOptions& o, size_t batches, size_t& sentences,
                           TrainingState state = TrainingState(), size_t maxLength = kMaxLength) {
  EpochData data(makeCorpus(maxLength), nullptr, PairEncoder{{}, maxLength}, o, 0, 1, nullptr);
  data.startEpoch(state);
  sentences = 0;
  for(size_t k = 0; k < batches; ++k) {
    std::vector<Batch> group = data.nextGroup();
    EXPECT_EQ(group.size(), 1u);
    sentences += size_t(group[0].sentences);
    state.corpusBatchesEpoch += 1;
  }
  data.recordPosition(state);
  return TrainingState::parse(state.toYaml(), "progress.yml");
}

// The batches the rest of the epoch holds after resuming from `state`.
std::vector<Batch> resume(const EpochDataOptions& o, TrainingState state, size_t maxLength = kMaxLength) {
  EpochData data(makeCorpus(maxLength), nullptr, PairEncoder{{}, maxLength}, o, 0, 1, nullptr);
  data.startEpoch(state);
  std::vector<Batch> rest;
  for(std::vector<Batch> group = data.nextGroup(); !group.empty(); group = data.nextGroup())
    rest.push_back(group[0]);
  return rest;
}

size_t sentencesOf(const std::vector<Batch>& batches) {
  size_t n = 0;
  for(const Batch& b : batches)
    n += size_t(b.sentences);
  return n;
}

TEST(EpochData, AResumeWithTheSameBatchingGoesOnAtTheBatch) {
  size_t trained = 0;
  TrainingState state = trainAndSave(withMiniBatch(16), 20, trained);
  EXPECT_EQ(state.corpusSentencesEpoch, trained);
  EXPECT_EQ(state.batching, cutOf(withMiniBatch(16)));

  size_t none = 0;
  std::vector<Batch> whole = resume(withMiniBatch(16), trainAndSave(withMiniBatch(16), 0, none));
  std::vector<Batch> rest = resume(withMiniBatch(16), state);
  ASSERT_EQ(rest.size() + 20, whole.size());
  for(size_t k = 0; k < rest.size(); ++k)
    EXPECT_EQ(rest[k].srcIds, whole[k + 20].srcIds) << "batch " << k + 20;
  EXPECT_EQ(trained + sentencesOf(rest), kPairs);
}

TEST(EpochData, AResumeWithOtherBatchingGoesOnAfterAsManySentences) {
  size_t trained = 0;
  TrainingState state = trainAndSave(withMiniBatch(16), 20, trained);
  ASSERT_NE(cutOf(withMiniBatch(32)), state.batching);
  // 20 batches of 32 would skip twice what was trained; as many sentences leave the epoch's rest
  size_t rest = sentencesOf(resume(withMiniBatch(32), state));
  EXPECT_LE(rest, kPairs - trained);
  EXPECT_GT(rest + 32, kPairs - trained);
}

// Resumed with other batches, trained on and saved, then resumed again: the second checkpoint
// holds the position in the batches it was trained with, so that nothing is skipped or trained
// twice (it held the first run's 20 batches plus 5, read as 25 batches of 32).
TEST(EpochData, ACheckpointAfterAResumeWithOtherBatchingHoldsItsOwnPosition) {
  size_t first = 0, second = 0;
  TrainingState saved = trainAndSave(withMiniBatch(16), 20, first);
  TrainingState again = trainAndSave(withMiniBatch(32), 5, second, saved);
  EXPECT_EQ(again.batching, cutOf(withMiniBatch(32)));
  EXPECT_EQ(again.corpusSentencesEpoch, again.corpusBatchesEpoch * 32) << "whole batches of 32 before the end";
  size_t rest = sentencesOf(resume(withMiniBatch(32), again));
  EXPECT_EQ(again.corpusSentencesEpoch + rest, kPairs);
  EXPECT_LE(rest, kPairs - first - second);
  EXPECT_GT(rest + 32, kPairs - first - second);
}

// Another --max-length keeps other pairs, shuffled otherwise: batch 20 of the new epoch is no
// place of the old one. The resume says so and goes on after as many sentences as were trained,
// as for other batching (it went on at batch 20 without a word).
TEST(EpochData, AResumeWithAnotherMaxLengthSaysSoAndGoesOnAfterAsManySentences) {
  size_t trained = 0;
  TrainingState state = trainAndSave(withMiniBatch(16), 20, trained);
  constexpr size_t kShorter = 9;  // keeps pairs of at most 8 words a side
  size_t kept = makeCorpus(kShorter)->size();
  ASSERT_LT(kept, kPairs - 200);
  ASSERT_GT(kept, trained + 100);
  testing::internal::CaptureStderr();
  std::vector<Batch> rest = resume(withMiniBatch(16), state, kShorter);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("Epoch 1 was cut into batches with '--max-length 50' when saved, '--max-length 9' now: it goes "
                     "on after "),
            std::string::npos)
      << log;
  EXPECT_LE(sentencesOf(rest), kept - trained);
  EXPECT_GT(sentencesOf(rest) + 16, kept - trained);
  // cropped instead of skipped: every pair kept, still another epoch
  EXPECT_NE(cutOf(withMiniBatch(16)), EpochData::epochCut(withMiniBatch(16).batching, PairEncoder{{}, kMaxLength, true}));
}

TEST(EpochData, TheBatchingNamesEveryOptionThatCutsTheEpoch) {
  BatchingOptions o;
  std::string base = o.describe();
  EXPECT_EQ(base, "--mini-batch 64 --mini-batch-words 0 --maxi-batch 100 --maxi-batch-sort trg --shuffle data "
                  "--shuffle-within-maxi-batch");
  auto differs = [&](auto change) {
    BatchingOptions c;
    change(c);
    return c.describe() != base;
  };
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.miniBatchWords = 500; }));
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.maxiBatch = 10; }));
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.sortBy = "src"; }));
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.shuffleData = false; }));
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.withinMaxiBatch = false; }));
  EXPECT_TRUE(differs([](BatchingOptions& c) { c.fitSentences = {40, 20}; }));
  EXPECT_FALSE(differs([](BatchingOptions& c) { c.seed = 99; }));  // a resume takes the saved seed
}

}  // namespace
}  // namespace marian
