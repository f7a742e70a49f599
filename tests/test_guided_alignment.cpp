// --guided-alignment through the data layer and its cost: Marian's alignment lines read (and bad
// ones named by file and line), each pair keeps its own line's points when others are skipped,
// </s>-</s> added, points on words a crop cut dropped, a point past a sentence an error naming the
// line, --right-left reverses them with the words, TSV fields serve as files; a batch's points
// share their target position (Marian's normalization) and stay with their sentences through
// slices and merges; the cost is minus the shared log of the guided head (by hand), and its
// gradient the finite differences'; --alignment's hard, soft and threshold texts, and a
// right-left model's alignments put in reading order. Training with it: test_guided_alignment_e2e.cpp; real
// Marian's Costs: bench/trajectory-vs-marian --args.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/vocab.h"
#include "data/word_alignment.h"
#include "data_files.h"
#include "grad_check.h"
#include "models/guided_alignment.h"

namespace marian {
namespace {

using testdata::errorOf;
using testdata::write;

std::string temp(const std::string& name) { return testdata::temp("marian_guided_", name); }

std::shared_ptr<Vocab> vocab() {
  write(temp("v.txt"), "a b c d e f g\n");
  std::remove(temp("v.yml").c_str());
  return loadOrCreateVocab(temp("v.yml"), {temp("v.txt")}, 0);
}

using Points = std::vector<std::pair<uint32_t, uint32_t>>;

Points pointsOf(const std::string& line) {
  Points out;
  bool ok = forEachAlignmentPoint(line.data(), line.size(), [&](AlignmentPoint a) { out.push_back({a.src, a.trg}); });
  return ok ? out : Points{{99, 99}};
}
Points pointsOf(const PairView& p) {
  Points out;
  for(size_t i = 0; i < p.alignmentCount; ++i)
    out.push_back({p.alignment[i].src, p.alignment[i].trg});
  return out;
}

// The corpus of these lines read through CorpusChunks, as training reads it.
Corpus corpusOf(const std::string& src, const std::string& trg, const std::string& alignment, size_t maxLength = 5,
                bool crop = false, bool rightLeft = false) {
  write(temp("c.src"), src);
  write(temp("c.trg"), trg);
  write(temp("c.aln"), alignment);
  CorpusChunks chunks({temp("c.src"), temp("c.trg")}, false, 2, "", LineExtras{{}, {temp("c.aln")}, false});
  PairEncoder encoder{{vocab(), vocab()}, maxLength, crop, DataWeighting::none, rightLeft, "", true,
                      "Alignment file 'c.aln'"};
  std::vector<size_t> all(chunks.chunks());
  for(size_t c = 0; c < all.size(); ++c)
    all[c] = c;
  return Corpus(chunks, all, encoder, 2);
}

}  // namespace

TEST(GuidedAlignment, ReadsMariansLinesAndNamesBadOnes) {
  EXPECT_EQ(pointsOf("0-0 1-2  3-1\t4-4 "), (Points{{0, 0}, {1, 2}, {3, 1}, {4, 4}}));
  EXPECT_EQ(pointsOf(""), Points{});
  EXPECT_EQ(pointsOf("123456789-0"), (Points{{123456789, 0}}));
  for(const char* bad : {"0-", "-1", "a-1", "0-1-2", "0 1", "1234567890-1", "0-1x", "0:1", "0--1"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(pointsOf(bad), (Points{{99, 99}}));
    EXPECT_NE(alignmentProblem(bad, std::strlen(bad)).find("is not a list of word alignments"), std::string::npos);
  }
  EXPECT_EQ(alignmentProblem("0-0 1-1", 7), "");
  // the corpus pass names every bad line of the alignment file, and a short file
  write(temp("b.src"), "a\nb\nc\n");
  write(temp("b.trg"), "a\nb\nc\n");
  write(temp("b.aln"), "0-0\n0-x\n1 1\n");
  std::string e = errorOf([&] { CorpusChunks({temp("b.src"), temp("b.trg")}, false, 8, "", LineExtras{{}, {temp("b.aln")}}); });
  EXPECT_NE(e.find("Alignment file '" + temp("b.aln") + "' has 2 bad lines"), std::string::npos) << e;
  EXPECT_NE(e.find("line 2 is not a list of word alignments"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3 is not a list"), std::string::npos) << e;
  write(temp("s.aln"), "0-0\n");
  e = errorOf([&] { CorpusChunks({temp("b.src"), temp("b.trg")}, false, 8, "", LineExtras{{}, {temp("s.aln")}}); });
  EXPECT_NE(e.find("differ in length"), std::string::npos) << e;
}

TEST(GuidedAlignment, EachPairKeepsItsLinesPointsWithEosAdded) {
  // line 2 empty, line 4 too long (6 tokens with </s> > 5): skipped with their points
  Corpus c = corpusOf("a b\n\nc\na b c d e\nd\n", "b c\nc\nd e\ne\nf g\n", "0-0 1-1 1-0\n0-0\n\n0-0\n0-1\n");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(pointsOf(c[0]), (Points{{0, 0}, {1, 1}, {1, 0}, {2, 2}}));  // </s>-</s> last, as Marian's
  EXPECT_EQ(pointsOf(c[1]), (Points{{1, 2}}));                            // an empty line: </s>-</s> alone
  EXPECT_EQ(pointsOf(c[2]), (Points{{0, 1}, {1, 2}}));
  // a crop drops the points on the words it cut and on the word </s> replaced (position 3 of 4)
  Corpus cropped = corpusOf("a b c d e f\n", "a b\n", "0-0 2-1 3-1 5-0\n", 4, true);
  EXPECT_EQ(pointsOf(cropped[0]), (Points{{0, 0}, {2, 1}, {3, 2}}));
  // --right-left: word i of n tokens is n - 2 - i, </s> stays
  Corpus reversed = corpusOf("a b c\n", "d e\n", "0-0 2-1 3-2\n", 5, false, true);
  EXPECT_EQ(pointsOf(reversed[0]), (Points{{2, 1}, {0, 0}, {3, 2}, {3, 2}}));
  // a point past a sentence's tokens (</s> included; before a crop) names its line
  std::string e = errorOf([&] { corpusOf("a b\nc\n", "d\ne\n", "0-0\n2-1 0-2\n"); });
  EXPECT_NE(e.find("Alignment file 'c.aln' line 2: the point 2-1 is past the pair's 2 source and 2 target tokens"),
            std::string::npos)
      << e;
  e = errorOf([&] { corpusOf("a\n", "a b c d e f\n", "9-5\n", 4, true); });  // the target cropped, not the source
  EXPECT_NE(e.find("line 1: the point 9-5 is past the pair's 2 source and 7 target tokens"), std::string::npos) << e;
}

TEST(GuidedAlignment, TsvFieldsServeAsFiles) {
  write(temp("c.tsv"), "0-0 1-1\ta b\t0.5\tb c\n\tc\t1.5\td e\n");
  CorpusChunks chunks({temp("c.tsv")}, true, 8, "", LineExtras{{"", 2}, {"", 0}, true});
  std::vector<RawPair> pairs = chunks.read(0);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].src, "a b");
  EXPECT_EQ(pairs[0].trg, "b c");
  EXPECT_EQ(pairs[0].alignment, "0-0 1-1");
  EXPECT_EQ(pairs[0].weights, "0.5");
  EXPECT_EQ(pairs[1].alignment, "");
  EXPECT_EQ(pairs[1].trg, "d e");
  write(temp("bad.tsv"), "a\tb\t0-0\n0-1\tc\t1-a\n");
  std::string e = errorOf([&] { CorpusChunks({temp("bad.tsv")}, true, 8, "", LineExtras{{}, {"", 2}}); });
  EXPECT_NE(e.find("line 2 field 2 is not a list of word alignments"), std::string::npos) << e;
  write(temp("two.tsv"), "a\tb\n");
  e = errorOf([&] { CorpusChunks({temp("two.tsv")}, true, 8, "", LineExtras{{"", 1}, {"", 2}}); });
  EXPECT_NE(e.find("has 2 field(s): --tsv needs a source, a target, the weights (--data-weighting) and the word "
                   "alignments (--guided-alignment) separated by TABs"),
            std::string::npos)
      << e;
}

TEST(GuidedAlignment, BatchPointsShareTheirTargetPositionAndStayWithTheirSentences) {
  Corpus c = corpusOf("a b\nc\nd e f\n", "b c\nd\ne\n", "0-0 1-0 1-1\n0-0\n0-0 1-0 2-0\n");
  Batch b = Batch::fromPairs(c, {0, 1, 2});
  auto linksOf = [](const Batch& batch) {
    std::vector<std::tuple<int, int, int, float>> out;
    for(const Batch::AlignmentLink& l : batch.guidedAlignment)
      out.emplace_back(l.sentence, l.src, l.trg, l.share);
    return out;
  };
  using L = std::vector<std::tuple<int, int, int, float>>;
  EXPECT_EQ(linksOf(b), (L{{0, 0, 0, 0.5f}, {0, 1, 0, 0.5f}, {0, 1, 1, 1.f}, {0, 2, 2, 1.f},
                           {1, 0, 0, 1.f}, {1, 1, 1, 1.f},
                           {2, 0, 0, 1.f / 3}, {2, 1, 0, 1.f / 3}, {2, 2, 0, 1.f / 3}, {2, 3, 1, 1.f}}));
  Batch tail = b.slice(1, 2);
  EXPECT_EQ(linksOf(tail), (L{{0, 0, 0, 1.f}, {0, 1, 1, 1.f}, {1, 0, 0, 1.f / 3}, {1, 1, 0, 1.f / 3},
                              {1, 2, 0, 1.f / 3}, {1, 3, 1, 1.f}}));
  Batch merged = Batch::merge({b.slice(2, 1), b.slice(0, 2)});
  L expected = linksOf(b.slice(2, 1));
  for(auto [s, src, trg, share] : linksOf(b.slice(0, 2)))
    expected.emplace_back(s + 1, src, trg, share);
  EXPECT_EQ(linksOf(merged), expected);
  std::vector<Batch> parts = merged.split();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(linksOf(parts[1]), linksOf(b.slice(0, 2)));
  std::vector<int> ids = {2, 0};
  std::string e = errorOf([&] { Batch::merge({b, Batch::fromPairs({&ids}, {&ids})}); });
  EXPECT_NE(e.find("with and without alignments"), std::string::npos) << e;
}

TEST(GuidedAlignment, CostIsMinusTheSharedLogOfTheGuidedHead) {
  // a batch of 2 sentences, 3 target and 4 source positions, attention of 2 heads
  Batch b;
  b.sentences = 2;
  b.trgLen = 3;
  b.srcLen = 4;
  b.guidedAlignment = {{0, 1, 0, 0.5f}, {0, 3, 0, 0.5f}, {0, 2, 2, 1.f}, {1, 0, 1, 1.f}, {1, 3, 2, 1.f}};
  std::vector<float> att(2 * 2 * 3 * 4);
  for(size_t i = 0; i < att.size(); ++i)
    att[i] = float(i % 7 + 1) / 10.f;  // any values: the cost reads the picked ones
  ExpressionGraph g(test::testDevice(), 1);
  Expr cost = guidedAlignmentCost(g, b, g.constant({2, 2, 3, 4}, att), 0.25f);
  g.forward({cost});
  auto at = [&](int s, int h, int t, int src) { return att[size_t(((s * 2 + h) * 3 + t) * 4 + src)]; };
  double expected = 0;
  for(const Batch::AlignmentLink& l : b.guidedAlignment)
    expected -= double(l.share) * std::log(double(at(l.sentence, 0, l.trg, l.src)) + 1e-6);
  expected *= 0.25;
  EXPECT_NEAR(kernels::toHost(cost->val())[0], expected, 1e-6 * std::abs(expected));
  // its gradient through the softmax of the attention's scores: the finite differences'
  test::checkGradients({Shape({2, 2, 3, 4})}, [&](ExpressionGraph& graph, const std::vector<Expr>& x) {
    return guidedAlignmentCost(graph, b, softmax(x[0]), 0.25f);
  });
  std::string e = errorOf([&] { guidedAlignmentCost(g, b, g.constant({2, 1, 2, 4}, std::vector<float>(16)), 1.f); });
  EXPECT_NE(e.find("attention [2x1x2x4] for a batch of 2 sentences, 3 target and 4 source positions"),
            std::string::npos)
      << e;
}

TEST(GuidedAlignment, AlignmentOutputWritesMariansHardSoftAndThresholdForms) {
  SoftAlignment a = {{0.5f, 0.5f, 0.f}, {0.1f, 0.2f, 0.7f}, {0.6f, 0.3f, 0.1f}};
  // hard: each target token's first most likely source token, points by source, then target
  EXPECT_EQ(AlignmentOutput("hard").text(a), "0-0 0-2 2-1");
  EXPECT_EQ(AlignmentOutput("1").text(a), "0-0 0-2 2-1");  // Marian's bare --alignment
  EXPECT_EQ(AlignmentOutput("0.2").text(a), "0-0 0-2 1-0 1-2 2-1");
  EXPECT_EQ(AlignmentOutput("0.5").text(a), "0-2 2-1");  // above it, not at it
  EXPECT_EQ(AlignmentOutput("soft").text({{0.9f, 0.1f}, {0.25f, 0.75f}}), "0.9,0.1 0.25,0.75");
  EXPECT_EQ(AlignmentOutput("soft").text({{1.f / 3, 2e-7f}}), "0.333333,2e-07");  // a stream's 6 digits
  EXPECT_EQ(AlignmentOutput("hard").text({}), "");
  for(const char* bad : {"", "0", "1.5", "-0.1", "0.5x", "x", "HARD"}) {
    SCOPED_TRACE(bad);
    std::string e = errorOf([&] { AlignmentOutput{bad}; });
    EXPECT_NE(e.find("hard, soft, or a threshold in (0, 1]"), std::string::npos) << e;
  }
  // a right-left model's rows and columns reversed but for </s>'s; a target cut at the length
  // limit (no </s> row) reversed whole
  SoftAlignment modelOrder = {{0.1f, 0.2f, 0.7f}, {0.3f, 0.4f, 0.3f}, {0.5f, 0.f, 0.5f}};
  EXPECT_EQ(readingOrder(modelOrder), (SoftAlignment{{0.4f, 0.3f, 0.3f}, {0.2f, 0.1f, 0.7f}, {0.f, 0.5f, 0.5f}}));
  EXPECT_EQ(readingOrder(modelOrder, false),
            (SoftAlignment{{0.f, 0.5f, 0.5f}, {0.4f, 0.3f, 0.3f}, {0.2f, 0.1f, 0.7f}}));
}

}  // namespace marian
