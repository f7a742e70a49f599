// BLEU as sacreBLEU computes it: 13a tokenization cases, hand-made scores (perfect = 100, no
// overlap = 0, brevity penalties), and the printed line.
#include <gtest/gtest.h>

#include <cmath>

#include "translator/bleu.h"
#include "translator/chrf.h"
#include "common/error.h"

namespace marian {
namespace {

using Tokens = std::vector<std::string>;

TEST(Bleu, Tokenize13a) {
  EXPECT_EQ(tokenize13a("Hello, world!"), (Tokens{"Hello", ",", "world", "!"}));
  EXPECT_EQ(tokenize13a("It costs 3.50 dollars, or 1,000 cents."),
            (Tokens{"It", "costs", "3.50", "dollars", ",", "or", "1,000", "cents", "."}));
  EXPECT_EQ(tokenize13a("A 5-year-old's toy (red)"), (Tokens{"A", "5", "-", "year-old's", "toy", "(", "red", ")"}));
  EXPECT_EQ(tokenize13a("He said &quot;no&quot; &amp; left"), (Tokens{"He", "said", "\"", "no", "\"", "&", "left"}));
  EXPECT_EQ(tokenize13a("  spaces   everywhere\t"), (Tokens{"spaces", "everywhere"}));
  EXPECT_EQ(tokenize13a("über straße."), (Tokens{"über", "straße", "."}));
  EXPECT_EQ(tokenize13a(""), Tokens{});
  // Unicode whitespace splits as in Python's str.split (sacreBLEU's): the no-break spaces of French
  // typography, an ideographic space; other characters of those UTF-8 lead bytes do not
  EXPECT_EQ(tokenize13a("Quoi\u00a0? Oui\u202f! a\u3000b\u2009c"), (Tokens{"Quoi", "?", "Oui", "!", "a", "b", "c"}));
  EXPECT_EQ(tokenize13a("\u00e9t\u00e9 \u2014 \u20ac5"), (Tokens{"\u00e9t\u00e9", "\u2014", "\u20ac5"}));
  EXPECT_DOUBLE_EQ(corpusBleu({"a b c d"}, {"a\u00a0b c d"}).score, 100.0);
}

TEST(Bleu, PerfectMatchIs100AndNoOverlapIs0) {
  std::vector<std::string> ref = {"A man is riding a bike down the street.", "Two dogs play in the snow."};
  BleuScore perfect = corpusBleu(ref, ref);
  EXPECT_DOUBLE_EQ(perfect.score, 100.0);
  EXPECT_DOUBLE_EQ(perfect.brevityPenalty, 1.0);
  BleuScore none = corpusBleu({"zzz yyy xxx www vvv uuu ttt sss qqq", "ppp ooo nnn mmm lll kkk"}, ref);
  EXPECT_EQ(none.score, 0.0);  // sacreBLEU stops early when nothing matches
  BleuScore empty = corpusBleu({"", ""}, ref);
  EXPECT_EQ(empty.score, 0.0);
  EXPECT_EQ(empty.hypLength, 0u);
}

TEST(Bleu, BrevityPenalty) {
  // the hypothesis is the first 6 of the reference's 12 tokens: every n-gram matches, BP = e^(1 - 12/6)
  std::string ref = "a b c d e f g h i j k l";
  BleuScore half = corpusBleu({"a b c d e f"}, {ref});
  EXPECT_NEAR(half.brevityPenalty, std::exp(1.0 - 2.0), 1e-12);
  EXPECT_NEAR(half.score, 100.0 * std::exp(1.0 - 2.0), 1e-9);
  EXPECT_NEAR(half.ratio, 0.5, 1e-12);
  // longer than the reference: no penalty, but precision suffers
  BleuScore longer = corpusBleu({"a b c d e f g h i j k l m n o p"}, {ref});
  EXPECT_DOUBLE_EQ(longer.brevityPenalty, 1.0);
  EXPECT_NEAR(longer.precisions[0], 100.0 * 12 / 16, 1e-9);
  EXPECT_NEAR(longer.precisions[3], 100.0 * 9 / 13, 1e-9);
}

TEST(Bleu, ClippedCountsAndExpSmoothing) {
  // "the the the the" against "the cat": unigram matches clipped to 1 of 4; no 2-, 3-, 4-gram
  // matches: exp smoothing gives 100/(2*3), 100/(4*2), 100/(8*1)
  BleuScore b = corpusBleu({"the the the the"}, {"the cat"});
  EXPECT_NEAR(b.precisions[0], 25.0, 1e-9);
  EXPECT_NEAR(b.precisions[1], 100.0 / 6, 1e-9);
  EXPECT_NEAR(b.precisions[2], 100.0 / 8, 1e-9);
  EXPECT_NEAR(b.precisions[3], 100.0 / 8, 1e-9);
  double expected = std::exp((std::log(25.0) + std::log(100.0 / 6) + std::log(12.5) + std::log(12.5)) / 4);
  EXPECT_NEAR(b.score, expected, 1e-9);
}

TEST(Bleu, PrintedLikeSacreBleu) {
  BleuScore b = corpusBleu({"a b c d e f"}, {"a b c d e f g h i j k l"});
  EXPECT_EQ(b.str(), "BLEU = 36.79 100.0/100.0/100.0/100.0 (BP = 0.368 ratio = 0.500 hyp_len = 6 ref_len = 12)");
}

TEST(Bleu, MismatchedLineCountsAreAnError) {
  EXPECT_ANY_THROW(corpusBleu({"a"}, {"a", "b"}));
}

}  // namespace
// Marian's chrF (validator.cpp calcChrF): precision and recall averaged over the character
// orders present in both, F-beta with beta 2, whitespace ignored
TEST(ChrF, HandComputedValues) {
  EXPECT_DOUBLE_EQ(corpusChrF({"a b c"}, {"abc"}), 100.0);
  // "ab" against "abc": order 1 P=1 R=2/3, order 2 P=1 R=1/2, orders 3-6 absent from the hypothesis
  // P=1, R=7/12: F2 = 5 * 7/12 / (4 + 7/12) = 35/55
  EXPECT_NEAR(corpusChrF({"ab"}, {"abc"}), 100.0 * 35.0 / 55.0, 1e-9);
  EXPECT_DOUBLE_EQ(corpusChrF({"xyz"}, {"abc"}), 0.0);
  EXPECT_DOUBLE_EQ(corpusChrF({""}, {"abc"}), 0.0);
  // counts summed over the corpus before averaging: the pair above plus a perfect "d"
  // order 1: P = 3/3, R = 3/4; order 2: P = 1/1, R = 1/2
  EXPECT_NEAR(corpusChrF({"ab", "d"}, {"abc", "d"}), 100.0 * 5 * (5.0 / 8) / (4 + 5.0 / 8), 1e-9);
  // UTF-8 characters count once: "äb" against "äbc" as "ab" against "abc"
  EXPECT_NEAR(corpusChrF({"\xc3\xa4" "b"}, {"\xc3\xa4" "bc"}), 100.0 * 35.0 / 55.0, 1e-9);
  EXPECT_THROW(corpusChrF({"a"}, {}), Error);
}

}  // namespace marian
