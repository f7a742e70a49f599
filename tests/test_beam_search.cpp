// Beam search on small randomly initialised models (transformer and s2s): beam size 1 is exactly
// greedy decoding; every hypothesis' score is the sum of its words' log-probabilities; n-best
// lists are sorted and no longer than the beam; length normalisation and word penalty follow
// their definitions; as Marian's: <unk> only with allowUnk, hypotheses at the length limit end
// with the word they chose (no </s>), word scores add up to the score; the decoder's kept states
// give what recomputing from the prefix gives; an empty source is the empty translation, as
// Marian's. The reference log-probabilities come from the training graph's loss, not from the
// decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/options.h"
#include "graph/operators.h"
#include "data/vocab.h"
#include "tensors/kernels.h"
#include "translator/beam_search.h"
#include "translator/translator.h"

namespace marian {
namespace {

const int kVocab = 23;

Options modelOptions(const std::string& type) {
  std::vector<std::string> args = {"marian",       "--type",  type, "--dim-emb",   "16", "--transformer-dim-ffn", "32",
                                   "--transformer-heads", "2", "--enc-depth", "1", "--dec-depth", type == "s2s" ? "1" : "2",
                                   "--dim-rnn", "16"};
  std::vector<const char*> argv;
  for(const auto& a : args)
    argv.push_back(a.c_str());
  return parseOptions(int(argv.size()), argv.data(), ProgramMode::modelConfig).options;
}

struct Fixture {
  std::unique_ptr<EncoderDecoder> model;
  ExpressionGraph graph{cpuDevice(0), 1, 0};
  std::vector<std::vector<int>> sources;

  explicit Fixture(const std::string& type) {
    model = createModel(modelOptions(type), kVocab, kVocab);
    std::vector<int> eos{Vocab::kEos};
    Batch declare = Batch::fromSources({&eos});
    declare.trgLen = 1;
    declare.trgIds = {Vocab::kEos};
    declare.trgMask = {1.f};
    model->loss(graph, declare, false);
    graph.params().allocate();
    std::mt19937 rng(5);
    for(int s = 0; s < 6; ++s) {
      std::vector<int> src;
      int len = 2 + s % 4;
      for(int t = 0; t < len; ++t)
        src.push_back(2 + int(rng() % (kVocab - 2)));
      src.push_back(Vocab::kEos);
      sources.push_back(src);
    }
  }

  Batch batch() const {
    std::vector<const std::vector<int>*> rows;
    for(const auto& s : sources)
      rows.push_back(&s);
    return Batch::fromSources(rows);
  }

  // log-probabilities of the next word after `prefix` for source s, computed alone and without
  // the decoder's state: from the training graph's loss (no smoothing), log p(w | prefix) =
  // loss(prefix) - loss(prefix w), the whole target teacher-forced
  double prefixLoss(size_t s, const std::vector<int>& target) {
    if(target.empty())
      return 0;
    Batch b = Batch::fromSources({&sources[s]});
    b.trgLen = int(target.size());
    b.trgIds = target;
    b.trgMask.assign(target.size(), 1.f);
    b.trgWords = target.size();
    graph.clear();
    Expr loss = model->loss(graph, b, false);
    graph.forward();
    return kernels::toHost(loss->val())[0];
  }
  std::vector<float> nextWord(size_t s, const std::vector<int>& prefix) {
    double before = prefixLoss(s, prefix);
    std::vector<float> lp(kVocab);
    for(int w = 0; w < kVocab; ++w) {
      std::vector<int> target = prefix;
      target.push_back(w);
      lp[size_t(w)] = float(before - prefixLoss(s, target));
    }
    return lp;
  }

  // the summed log-probability of words + </s> (without it when cut at the length limit)
  double score(size_t s, std::vector<int> words, bool withEos = true) {
    if(withEos)
      words.push_back(Vocab::kEos);
    return -prefixLoss(s, words);
  }
};

// The decoder as it was before it kept states: every step recomputes each row's log-probabilities
// from its source and its whole prefix, here through the training graph (Fixture::nextWord). Its
// own graph and DecoderState stay empty but for one value, so that the state has rows.
class Recomputing : public EncoderDecoder {
public:
  explicit Recomputing(Fixture& f) : f_(f) {}
  Expr labelCrossEntropies(ExpressionGraph&, const Batch&, bool) override { return nullptr; }
  void startDecoding(ExpressionGraph& g, const Batch& sources, DecoderState& state) override {
    state.set("row", g.constant({sources.sentences, 1}, std::vector<float>(size_t(sources.sentences), 0.f)));
  }
  Expr decodeStep(ExpressionGraph& g, const DecodingStep& step, DecoderState& state) override {
    std::vector<float> lp;
    for(int r = 0; r < state.rows(); ++r) {
      std::vector<float> row = f_.nextWord(size_t((*step.sentences)[size_t(r)]), (*step.prefixes[size_t(r)]));
      EXPECT_EQ(step.position, int((*step.prefixes[size_t(r)]).size()));
      if(step.position > 0) {
        EXPECT_EQ(step.lastWords[size_t(r)], (*step.prefixes[size_t(r)]).back());
      }
      lp.insert(lp.end(), row.begin(), row.end());
    }
    return g.constant({state.rows(), kVocab}, std::move(lp));
  }

private:
  Fixture& f_;
};

// The n-best lists of the decoder with its kept states (cached keys and values, recurrent states,
// rows reordered by beam) equal those of a decoder that recomputes everything from the prefix:
// the same hypotheses in the same order, scores within 1e-4.
TEST(BeamSearch, KeptStatesGiveTheNBestListsOfRecomputation) {
  for(const std::string type : {"transformer", "s2s"}) {
    SCOPED_TRACE(type);
    Fixture f(type);
    BeamOptions options;
    options.beamSize = 3;
    options.maxLengthFactor = 1.5f;
    auto kept = BeamSearch(*f.model, f.graph, options).search(f.batch());
    Recomputing reference(f);
    ExpressionGraph referenceGraph(cpuDevice(0), 1, 0);
    auto recomputed = BeamSearch(reference, referenceGraph, options).search(f.batch());
    ASSERT_EQ(kept.size(), recomputed.size());
    for(size_t s = 0; s < kept.size(); ++s) {
      ASSERT_EQ(kept[s].size(), recomputed[s].size()) << "sentence " << s;
      for(size_t i = 0; i < kept[s].size(); ++i) {
        EXPECT_EQ(kept[s][i].words, recomputed[s][i].words) << "sentence " << s << " hypothesis " << i;
        EXPECT_NEAR(kept[s][i].score, recomputed[s][i].score, 1e-4 * (1 + std::fabs(recomputed[s][i].score)));
      }
    }
  }
}

// The state keeps the rows it is told to, in that order and repeated, for values set in the step
// (out of the graph's workspace) and values kept from before; a graph reads them as leaves.
TEST(DecoderState, KeepsRowsInOrderAcrossSteps) {
  ExpressionGraph g(cpuDevice(0), 1, 0);
  DecoderState state(g.device());
  g.clear();
  state.set("a", g.constant({3, 2}, {0, 1, 10, 11, 20, 21}));
  state.set("b", g.constant({3, 1, 2}, {0, 0, 1, 1, 2, 2}));
  g.forward();
  state.keepRows({0, 1, 2});
  EXPECT_EQ(state.rows(), 3);
  g.clear();
  Expr a = state.get(g, "a");
  state.set("a", a * 2.f);  // set again in this step; "b" only kept
  g.forward();
  state.keepRows({2, 2, 0, 1});
  g.clear();
  Expr a2 = state.get(g, "a"), b2 = state.get(g, "b");
  g.forward();
  EXPECT_EQ(a2->shape(), Shape({4, 2}));
  EXPECT_EQ(b2->shape(), Shape({4, 1, 2}));
  EXPECT_EQ(kernels::toHost(a2->val()), (std::vector<float>{40, 42, 40, 42, 0, 2, 20, 22}));
  EXPECT_EQ(kernels::toHost(b2->val()), (std::vector<float>{2, 2, 2, 2, 0, 0, 1, 1}));
  EXPECT_FALSE(a2->needsGrad());
  EXPECT_THROW(state.get(g, "c"), Error);
  EXPECT_THROW(state.keepRows({}), Error);
  EXPECT_THROW(state.keepRows({4}), Error);  // beyond its 4 rows
}

// A per-sentence value (the encoder's keys and values) stays as it was set whatever rows the
// hypotheses continue, beside per-row values that follow them.
TEST(DecoderState, KeepsPerSentenceValuesAsTheyAre) {
  ExpressionGraph g(cpuDevice(0), 1, 0);
  DecoderState state(g.device());
  g.clear();
  state.setPerSentence("context", g.constant({2, 3}, {0, 1, 2, 10, 11, 12}));
  state.set("row", g.constant({2, 1}, {0, 1}));
  g.forward();
  state.keepRows({0, 0, 1});
  g.clear();
  state.set("row", state.get(g, "row") + 5.f);
  g.forward();
  state.keepRows({2, 1, 1, 0});
  g.clear();
  Expr context = state.get(g, "context"), row = state.get(g, "row");
  g.forward();
  EXPECT_EQ(state.rows(), 4);
  EXPECT_EQ(context->shape(), Shape({2, 3}));
  EXPECT_EQ(kernels::toHost(context->val()), (std::vector<float>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(kernels::toHost(row->val()), (std::vector<float>{6, 5, 5, 5}));
}

// A value of a step may be a view of the state itself (its own kept tensor or another's): every
// value is kept from what the state held before the step, whatever order they were set in.
TEST(DecoderState, ValuesThatAreViewsOfTheStateReadItBeforeItChanges) {
  ExpressionGraph g(cpuDevice(0), 1, 0);
  DecoderState state(g.device());
  g.clear();
  state.set("a", g.constant({2, 2}, {0, 1, 10, 11}));
  g.forward();
  state.keepRows({0, 1});
  g.clear();
  Expr a = state.get(g, "a");
  state.set("a", a * 2.f);  // a new value for a, then b and c as views of a's kept tensor
  state.set("b", a);
  state.set("c", state.get(g, "a"));
  g.forward();
  state.keepRows({1, 0, 1});
  g.clear();
  Expr a2 = state.get(g, "a"), b2 = state.get(g, "b"), c2 = state.get(g, "c");
  g.forward();
  EXPECT_EQ(kernels::toHost(a2->val()), (std::vector<float>{20, 22, 0, 2, 20, 22}));
  EXPECT_EQ(kernels::toHost(b2->val()), (std::vector<float>{10, 11, 0, 1, 10, 11}));
  EXPECT_EQ(kernels::toHost(c2->val()), (std::vector<float>{10, 11, 0, 1, 10, 11}));
  g.clear();
  state.set("a", state.get(g, "a"));  // itself
  g.forward();
  state.keepRows({2, 1});
  g.clear();
  Expr a3 = state.get(g, "a");
  g.forward();
  EXPECT_EQ(kernels::toHost(a3->val()), (std::vector<float>{20, 22, 0, 2}));
}

// A value one position longer each step (a self-attention cache) holds its own buffer with some
// headroom, not every smaller buffer it outgrew; after clear() the next batch reuses them.
TEST(DecoderState, MemoryFollowsTheLargestValueNotItsHistory) {
  ExpressionGraph g(cpuDevice(0), 1, 0);
  DecoderState state(g.device());
  const int rows = 8, width = 64, steps = 60;
  auto decode = [&] {
    state.clear();
    for(int t = 1; t <= steps; ++t) {
      g.clear();
      state.set("cache", g.constant({rows, t, width}, std::vector<float>(size_t(rows) * t * width, float(t))));
      g.forward();
      std::vector<int> from(static_cast<size_t>(rows));
      for(int r = 0; r < rows; ++r)
        from[size_t(r)] = (r + t) % rows;
      state.keepRows(from);
    }
  };
  decode();
  size_t last = size_t(rows) * steps * width * sizeof(float);
  size_t held = state.bytes();
  EXPECT_GE(held, last);
  EXPECT_LE(held, last * 3 / 2 + 4096) << "the outgrown buffers are held too";
  decode();  // the same sizes again: nothing new
  EXPECT_EQ(state.bytes(), held);
  g.clear();
  Expr cache = state.get(g, "cache");
  g.forward();
  EXPECT_EQ(kernels::toHost(cache->val())[0], float(steps));
}

// Greedy decoding of sources of 3 to 6 tokens in one batch, capped at twice the longest source
// of the batch (Marian's rule) or, when perSentence, twice the sentence's own source.
void checkGreedy(const std::string& type, bool perSentence) {
  Fixture f(type);
  BeamOptions options;
  options.beamSize = 1;
  options.maxLengthFactor = 2;
  options.maxLengthPerSentence = perSentence;
  BeamSearch search(*f.model, f.graph, options);
  auto results = search.search(f.batch());
  ASSERT_EQ(results.size(), f.sources.size());
  size_t longest = 0;
  for(const auto& source : f.sources)
    longest = std::max(longest, source.size());
  int cutShorterThanLongest = 0;
  for(size_t s = 0; s < f.sources.size(); ++s) {
    SCOPED_TRACE("sentence " + std::to_string(s));
    // greedy: the most probable word but <unk> at every step until </s>, or until the length
    // limit, where the last word chosen ends the translation (Marian's)
    std::vector<int> greedy;
    size_t limit = size_t(std::ceil(2.0 * double(perSentence ? f.sources[s].size() : longest)));
    bool cut = false;
    while(true) {
      std::vector<float> lp = f.nextWord(s, greedy);
      lp[Vocab::kUnk] = -INFINITY;
      int best = int(std::max_element(lp.begin(), lp.end()) - lp.begin());
      if(best == Vocab::kEos)
        break;
      greedy.push_back(best);
      if(greedy.size() >= limit) {
        cut = true;
        break;
      }
    }
    ASSERT_EQ(results[s].size(), 1u);
    EXPECT_EQ(results[s][0].words, greedy);
    EXPECT_NEAR(results[s][0].score, f.score(s, greedy, !cut), 1e-3);
    EXPECT_EQ(results[s][0].wordScores.size(), greedy.size() + (cut ? 0 : 1));
    cutShorterThanLongest += cut && f.sources[s].size() < longest;
  }
  // the untrained models run into the cap, so the two rules give different translations
  EXPECT_GT(cutShorterThanLongest, 0);
}

TEST(BeamSearch, BeamSizeOneIsGreedyTransformer) { checkGreedy("transformer", false); }
TEST(BeamSearch, BeamSizeOneIsGreedyS2S) { checkGreedy("s2s", false); }
TEST(BeamSearch, BeamSizeOneIsGreedyCappedPerSentence) {
  checkGreedy("transformer", true);
  checkGreedy("s2s", true);
}

TEST(BeamSearch, NBestListsAreScoredSortedAndNormalised) {
  for(const std::string type : {"transformer", "s2s"}) {
    SCOPED_TRACE(type);
    Fixture f(type);
    BeamOptions options;
    options.beamSize = 4;
    options.normalize = 0.6f;
    options.wordPenalty = 0.1f;
    BeamSearch search(*f.model, f.graph, options);
    auto results = search.search(f.batch());
    for(size_t s = 0; s < f.sources.size(); ++s) {
      ASSERT_FALSE(results[s].empty());
      ASSERT_LE(results[s].size(), 4u);
      for(size_t i = 0; i < results[s].size(); ++i) {
        const Hypothesis& h = results[s][i];
        bool cut = h.wordScores.size() == h.words.size();  // at the length limit, no </s>
        ASSERT_EQ(h.wordScores.size(), h.words.size() + (cut ? 0 : 1));
        double length = double(h.wordScores.size());
        // as Marian's n-best list: F0 the model's score, the word penalty in the normalised one only
        EXPECT_NEAR(h.score, f.score(s, h.words, !cut), 1e-3);
        EXPECT_NEAR(h.normalized, (h.score - 0.1 * length) / std::pow(length, 0.6), 1e-4);
        double summed = 0;
        for(float w : h.wordScores)
          summed += w;
        EXPECT_NEAR(summed, h.score, 1e-3);
        if(i > 0) {
          EXPECT_GE(results[s][i - 1].normalized, h.normalized);
        }
        for(int w : h.words) {
          EXPECT_NE(w, Vocab::kEos);
          EXPECT_NE(w, Vocab::kUnk);
        }
      }
    }
  }
}

// The decoder's mini-batches as Marian's BatchGenerator cuts them: each window of --maxi-batch
// mini-batches sorted longest first (unsorted: its last line first); --mini-batch-words ends a
// batch with the line whose source words pass it; no batch crosses a window.
TEST(DecodingBatches, LongestFirstInEachWindowAndWordsAsMarian) {
  std::vector<size_t> lengths = {3, 9, 5, 7, 2, 4};
  DecodingLimits limits;
  limits.maxiBatch = 2;  // windows of 4 lines with --mini-batch 2
  using Lines = std::vector<std::vector<size_t>>;
  EXPECT_EQ(decodingBatches(lengths, 2, limits), (Lines{{1, 3}, {2, 0}, {5, 4}}));
  limits.miniBatchWords = 10;  // 9 + 7 pass 10; 5 + 3 do not, and the window ends
  EXPECT_EQ(decodingBatches(lengths, 2, limits), (Lines{{1, 3}, {2, 0}, {5, 4}}));
  limits.miniBatchWords = 6;
  EXPECT_EQ(decodingBatches(lengths, 2, limits), (Lines{{1}, {3}, {2, 0}, {5, 4}}));
  limits.sortByLength = false;  // Marian's queue by id: each window's last line first
  limits.miniBatchWords = 0;
  EXPECT_EQ(decodingBatches(lengths, 3, limits), (Lines{{5, 4, 3}, {2, 1, 0}}));
  EXPECT_EQ(decodingBatches(lengths, 2, limits), (Lines{{3, 2}, {1, 0}, {5, 4}}));
  limits.maxiBatch = 0;  // one window: the whole input
  limits.sortByLength = true;
  EXPECT_EQ(decodingBatches(lengths, 4, limits), (Lines{{1, 3, 2, 5}, {0, 4}}));
  // equal lengths by the tie lengths (marian-scorer's other side), longest first
  std::vector<size_t> same = {4, 4, 4, 4}, other = {1, 3, 2, 5};
  EXPECT_EQ(decodingBatches(same, 2, limits, nullptr, &other), (Lines{{3, 1}, {2, 0}}));
}

// <unk> made the most probable word by its output bias: chosen everywhere with allowUnk, never
// without it (Marian's --allow-unk).
TEST(BeamSearch, UnknownWordsOnlyWhenAllowed) {
  Fixture f("transformer");
  std::vector<float> values = kernels::toHost(f.graph.params().values());
  bool found = false;
  for(const auto& e : f.graph.params().entries())
    if(e.name == "decoder_ff_logit_out_b") {
      values[e.offset + Vocab::kUnk] = 100.f;
      found = true;
    }
  ASSERT_TRUE(found);
  kernels::fromHost(f.graph.params().values(), values);
  for(bool allow : {false, true}) {
    BeamOptions options;
    options.beamSize = 2;
    options.allowUnk = allow;
    BeamSearch search(*f.model, f.graph, options);
    auto results = search.search(f.batch());
    for(const auto& list : results) {
      ASSERT_FALSE(list.empty());
      for(const Hypothesis& h : list) {
        size_t unks = size_t(std::count(h.words.begin(), h.words.end(), Vocab::kUnk));
        if(!allow) {
          EXPECT_EQ(unks, 0u);
        } else if(&h == &list[0]) {  // the best: <unk> throughout, up to the length limit
          EXPECT_TRUE(unks == h.words.size() && unks > 0) << unks << " of " << h.words.size();
        }
      }
    }
  }
}

// An empty line (a source of </s> alone) is translated as Marian does: at once, one empty
// hypothesis of score 0, whatever the model would say; the other sentences of its batch as alone.
TEST(BeamSearch, AnEmptySourceIsTheEmptyTranslation) {
  Fixture f("transformer");
  BeamOptions options;
  options.beamSize = 3;
  std::vector<int> empty{Vocab::kEos};
  Batch mixed = Batch::fromSources({&empty, &f.sources[1]});
  auto results = BeamSearch(*f.model, f.graph, options).search(mixed);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0].size(), 1u);
  EXPECT_TRUE(results[0][0].words.empty());
  EXPECT_EQ(results[0][0].score, 0.f);
  EXPECT_EQ(results[0][0].normalized, 0.f);
  EXPECT_EQ(results[0][0].wordScores, std::vector<float>{0.f});
  // the word penalty ranks it as Marian's History does a finished translation of length 1
  options.wordPenalty = 0.5f;
  options.normalize = 0.6f;
  EXPECT_EQ(BeamSearch(*f.model, f.graph, options).search(Batch::fromSources({&empty}))[0][0].normalized, -0.5f);
  options.wordPenalty = 0.f;
  options.normalize = 0.f;
  // the other sentence: its own source's width caps it, as in a batch of its own
  auto alone = BeamSearch(*f.model, f.graph, options).search(Batch::fromSources({&f.sources[1]}));
  ASSERT_EQ(results[1].size(), alone[0].size());
  for(size_t k = 0; k < alone[0].size(); ++k) {
    EXPECT_EQ(results[1][k].words, alone[0][k].words);
    EXPECT_NEAR(results[1][k].score, alone[0][k].score, 1e-4);
  }
}

}  // namespace
}  // namespace marian
