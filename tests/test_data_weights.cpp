// --data-weighting's weights through the data layer: each pair keeps its own line's weights when
// other pairs are skipped (empty, too long), a word's are cropped with its target, </s>'s given or
// left out; a TSV field serves as a file; a batch's weights stay with their sentences through
// slices and merges; --right-left reverses them with their words; bad weights are named by the
// corpus pass (file and line) or by the encoder (file, line and counts).
#include <gtest/gtest.h>

#include "common/error.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/vocab.h"
#include "data_files.h"

namespace marian {
namespace {

using testdata::errorOf;
using testdata::write;

std::string temp(const std::string& name) { return testdata::temp("marian_weights_", name); }

std::shared_ptr<Vocab> vocab() {
  write(temp("v.txt"), "a b c d e f g\n");
  std::remove(temp("v.yml").c_str());
  return loadOrCreateVocab(temp("v.yml"), {temp("v.txt")}, 0);
}

// The corpus of these lines read through CorpusChunks, as training reads it.
Corpus corpusOf(const std::string& src, const std::string& trg, const std::string& weights, DataWeighting type,
                size_t maxLength = 4, bool crop = false, bool rightLeft = false) {
  write(temp("c.src"), src);
  write(temp("c.trg"), trg);
  write(temp("c.w"), weights);
  CorpusChunks chunks({temp("c.src"), temp("c.trg")}, false, 2, "",
                      LineExtras{{temp("c.w")}, {}, type == DataWeighting::sentence});
  PairEncoder encoder{{vocab(), vocab()}, maxLength, crop, type, rightLeft, "Weights file 'c.w'"};
  std::vector<size_t> all(chunks.chunks());
  for(size_t c = 0; c < all.size(); ++c)
    all[c] = c;
  return Corpus(chunks, all, encoder, 2);
}

std::vector<float> weightsOf(const PairView& p) { return std::vector<float>(p.weights, p.weights + p.weightCount); }

}  // namespace

TEST(DataWeights, EachPairKeepsItsLinesWeightsWhenOthersAreSkipped) {
  // line 2 empty, line 4 too long (5 tokens with </s> > 4): skipped with their weights
  Corpus c = corpusOf("a b\n\nc\na b c d\nd\n", "b\nc\nd e\ne\nf g\n", "0.5\n7\n1.5\n9\n2.5\n", DataWeighting::sentence);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(weightsOf(c[0]), std::vector<float>{0.5f});
  EXPECT_EQ(weightsOf(c[1]), std::vector<float>{1.5f});
  EXPECT_EQ(weightsOf(c[2]), std::vector<float>{2.5f});
  // a word's: one a target token, </s>'s given (line 1) or left out (line 2: 1)
  Corpus w = corpusOf("a\nb\n", "b c\nd\n", "0.5 0.25 2\n3\n", DataWeighting::word);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(weightsOf(w[0]), (std::vector<float>{0.5f, 0.25f, 2.f}));
  EXPECT_EQ(weightsOf(w[1]), (std::vector<float>{3.f, 1.f}));
  // cropped with the target: 4 tokens, the last </s>'s (Marian cuts the weights at --max-length)
  Corpus cropped = corpusOf("a\n", "a b c d e\n", "1 2 3 4 5 6\n", DataWeighting::word, 4, true);
  EXPECT_EQ(weightsOf(cropped[0]), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  // --right-left: the words' weights reversed with them, </s>'s last
  Corpus reversed = corpusOf("a b\n", "c d e\n", "1 2 3 4\n", DataWeighting::word, 10, false, true);
  EXPECT_EQ(weightsOf(reversed[0]), (std::vector<float>{3.f, 2.f, 1.f, 4.f}));
  std::vector<int> trg(reversed[0].trg.begin(), reversed[0].trg.end());
  EXPECT_EQ(trg, vocab()->encode("e d c"));
  // cropped first, then reversed (Marian's order): "a b c d" to "a b </s>", then "b a </s>"
  Corpus both = corpusOf("a b c d\n", "a\n", "1\n", DataWeighting::sentence, 3, true, true);
  EXPECT_EQ(std::vector<int>(both[0].src.begin(), both[0].src.end()), vocab()->encode("b a"));
}

TEST(DataWeights, ATsvFieldServesAsAFile) {
  write(temp("c.tsv"), "a b\tb\t0.5\nc\td e\t1.5\n");
  CorpusChunks chunks({temp("c.tsv")}, true, 8, "", LineExtras{{"", 2}, {}, true});
  std::vector<RawPair> pairs = chunks.read(0);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[1].src, "c");
  EXPECT_EQ(pairs[1].trg, "d e");
  EXPECT_EQ(pairs[1].weights, "1.5");
  write(temp("first.tsv"), "0.5\ta b\tb\n");
  std::vector<RawPair> first = CorpusChunks({temp("first.tsv")}, true, 8, "", LineExtras{{"", 0}, {}, true}).read(0);
  EXPECT_EQ(first[0].src, "a b");
  EXPECT_EQ(first[0].weights, "0.5");
  write(temp("two.tsv"), "a\tb\n");
  std::string e = errorOf([&] { CorpusChunks({temp("two.tsv")}, true, 8, "", LineExtras{{"", 2}, {}, true}); });
  EXPECT_NE(e.find("line 1 has 2 field(s): --tsv needs a source, a target and the weights"), std::string::npos) << e;
}

TEST(DataWeights, ABatchsWeightsStayWithTheirSentences) {
  Corpus c = corpusOf("a\nb c\nd\n", "b c\nd\ne f g\n", "1 2 3\n4 5\n6 7 8 9\n", DataWeighting::word, 10);
  Batch b = Batch::fromPairs(c, {0, 1, 2});
  ASSERT_EQ(b.trgLen, 4);
  EXPECT_EQ(b.trgWeights, (std::vector<float>{1, 2, 3, 1, 4, 5, 1, 1, 6, 7, 8, 9}));  // 1 at padding
  Batch second = b.slice(1, 2);
  EXPECT_EQ(second.trgWeights, (std::vector<float>{4, 5, 1, 1, 6, 7, 8, 9}));
  Batch merged = Batch::merge({b.slice(2, 1), b.slice(0, 1)});
  EXPECT_EQ(merged.trgWeights, (std::vector<float>{6, 7, 8, 9, 1, 2, 3, 1}));
  EXPECT_EQ(merged.split()[1].trgWeights, (std::vector<float>{1, 2, 3}));
  // a sentence's weight at each of its tokens
  Corpus s = corpusOf("a\nb\n", "b c\nd\n", "0.5\n2\n", DataWeighting::sentence);
  EXPECT_EQ(Batch::fromPairs(s, {0, 1}).trgWeights, (std::vector<float>{0.5f, 0.5f, 0.5f, 2.f, 2.f, 1.f}));
  EXPECT_TRUE(Batch::fromPairs(corpusOf("a\n", "b\n", "1\n", DataWeighting::none), {0}).trgWeights.empty());
}

TEST(DataWeights, BadWeightsAreNamed) {
  auto passError = [&](const std::string& weights, DataWeighting type) {
    return errorOf([&] { corpusOf("a\nb\n", "b\nc\n", weights, type); });
  };
  std::string e = passError("1\nx\n", DataWeighting::sentence);
  EXPECT_NE(e.find("Weights file '" + temp("c.w") + "' line 2 is not a list of weights"), std::string::npos) << e;
  e = passError("1\nnan\n", DataWeighting::word);
  EXPECT_NE(e.find("line 2 has a weight out of float's range, or not finite: 'nan'"), std::string::npos) << e;
  e = passError("1\n1e-50\n", DataWeighting::sentence);
  EXPECT_NE(e.find("line 2 has a weight out of float's range"), std::string::npos) << e;
  // as Marian's std::stof reads them: a sign, an exponent, TABs
  Corpus signs = corpusOf("a\nb\n", "b\nc\n", "+1.5\n\t2e-1 \n", DataWeighting::sentence);
  EXPECT_EQ(weightsOf(signs[0]), std::vector<float>{1.5f});
  EXPECT_EQ(weightsOf(signs[1]), std::vector<float>{0.2f});
  e = passError("1 2\n1\n", DataWeighting::sentence);
  EXPECT_NE(e.find("line 1 has 2 weights: --data-weighting-type sentence takes one a line"), std::string::npos) << e;
  e = passError("1\n\n", DataWeighting::word);
  EXPECT_NE(e.find("line 2 has no weight"), std::string::npos) << e;
  e = passError("1\n", DataWeighting::sentence);
  EXPECT_NE(e.find("differ in length"), std::string::npos) << e;
  e = passError("1\n1 2 3 4\n", DataWeighting::word);  // "c" has 2 tokens with </s>
  EXPECT_NE(e.find("Weights file 'c.w' line 2 has 4 weights for 1 target tokens (2 with </s>)"), std::string::npos)
      << e;
}

}  // namespace marian
