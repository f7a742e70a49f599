// Marian's --right-left end to end: a right-to-left model trained on the synthetic corpus is the
// left-to-right model trained on the corpus with every line's words reversed, exactly (the same
// ids, so the same Costs and validation cross-entropy), and the programs that read its model turn
// it around: marian-decoder's translations are the other model's of the reversed sources, read
// backwards (its word scores in the model's order, as Marian prints them), and marian-scorer's
// scores are the other model's of the reversed pairs. The decoder and the scorer learn that the
// model is right-to-left from its embedded configuration.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "e2e_helpers.h"

namespace {

using e2e::costs;
using e2e::linesOf;
using e2e::readFile;
using e2e::RunResult;

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

std::string reversedLine(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for(std::string w; in >> w;)
    words.push_back(w);
  std::reverse(words.begin(), words.end());
  std::string out;
  for(const std::string& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}


// FILE with each line's words reversed, as FILE.rev
std::string reversedFile(const std::string& path) {
  std::ofstream out(path + ".rev");
  for(const std::string& line : linesOf(readFile(path)))
    out << reversedLine(line) << "\n";
  return path + ".rev";
}

std::string decode(const std::string& model, const std::string& input, const std::string& out) {
  std::string d = e2e::corpusDir();
  return std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + model + " -v " + d + "/vocab.src.yml " + d +
         "/vocab.trg.yml -b 4 --n-best --word-scores --mini-batch 8 --maxi-batch 4 --maxi-batch-sort src -i " +
         input + " > " + out + " 2> " + out + ".log";
}

std::string score(const std::string& model, const std::string& src, const std::string& trg, const std::string& out) {
  std::string d = e2e::corpusDir();
  return std::string(MARIAN_BIN_DIR) + "/marian-scorer -m " + model + " -v " + d + "/vocab.src.yml " + d +
         "/vocab.trg.yml --word-scores -t " + src + " " + trg + " > " + out + " 2> " + out + ".log";
}

}  // namespace

TEST(RightLeft, IsTheLeftToRightModelOfReversedSentencesInTrainingDecodingAndScoring) {
  std::string d = e2e::corpusDir();
  const std::string run = " --after-batches 40 --disp-freq 5 --valid-freq 40 --valid-metrics cross-entropy bleu "
                          "--beam-size 2 --valid-translation-output ";
  RunResult r2l = e2e::run("right-left", run + d + "/r2l.valid.out --right-left" + e2e::validation());
  ASSERT_EQ(r2l.status, 0) << r2l.log;
  RunResult l2r = e2e::run("right-left-reversed", run + d + "/l2r.valid.out --train-sets " +
                                                     reversedFile(d + "/train.src") + " " + reversedFile(d + "/train.trg") +
                                                     " --valid-sets " + reversedFile(d + "/valid.src") + " " +
                                                     reversedFile(d + "/valid.trg"));
  ASSERT_EQ(l2r.status, 0) << l2r.log;
  EXPECT_EQ(costs(r2l.log), costs(l2r.log));
  EXPECT_EQ(costs(r2l.log).size(), 8u) << r2l.log;
  EXPECT_EQ(e2e::validCE(r2l.log), e2e::validCE(l2r.log));
  EXPECT_EQ(e2e::validCE(r2l.log).size(), 1u) << r2l.log;
  // validation's translations in reading order: the other's read backwards (BLEU on words is the same)
  EXPECT_EQ(readFile(d + "/r2l.valid.out"), readFile(reversedFile(d + "/l2r.valid.out")));
  EXPECT_FALSE(readFile(d + "/r2l.valid.out").empty());
  std::regex bleu("\\[valid\\] Ep\\. \\d+ : Up\\. 40 : bleu : ([0-9.]+)");
  std::smatch a, b;
  ASSERT_TRUE(std::regex_search(r2l.log, a, bleu)) << r2l.log;
  ASSERT_TRUE(std::regex_search(l2r.log, b, bleu)) << l2r.log;
  EXPECT_EQ(a[1], b[1]);
  EXPECT_NE(readFile(d + "/right-left/model.npz.yml").find("right-left: true"), std::string::npos);

  // decoding: the right-to-left model's n-best lists are the other's of the reversed sources, each
  // translation read backwards, with the same scores and word scores
  std::string m = d + "/right-left/model.npz", other = d + "/right-left-reversed/model.npz";
  ASSERT_EQ(sh(decode(m, d + "/test.src", d + "/right-left/test.nbest")), 0) << readFile(d + "/right-left/test.nbest.log");
  ASSERT_EQ(sh(decode(other, reversedFile(d + "/test.src"), d + "/right-left/test-other.nbest")), 0);
  std::vector<std::string> got = linesOf(readFile(d + "/right-left/test.nbest")),
                           expected = linesOf(readFile(d + "/right-left/test-other.nbest"));
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_GT(got.size(), 40u);
  bool anyReversed = false;
  for(size_t i = 0; i < got.size(); ++i) {
    size_t a = expected[i].find(" ||| "), b = expected[i].find(" ||| ", a + 5);
    std::string text = expected[i].substr(a + 5, b - a - 5);
    std::string turned = expected[i].substr(0, a + 5) + reversedLine(text) + expected[i].substr(b);
    EXPECT_EQ(got[i], turned);
    anyReversed = anyReversed || reversedLine(text) != text;
  }
  EXPECT_TRUE(anyReversed);

  // scoring: the pairs as the other model scores them reversed, word scores included
  ASSERT_EQ(sh(score(m, d + "/test.src", d + "/test.trg", d + "/right-left/test.scores")), 0)
      << readFile(d + "/right-left/test.scores.log");
  ASSERT_EQ(sh(score(other, reversedFile(d + "/test.src"), reversedFile(d + "/test.trg"),
                     d + "/right-left/test-other.scores")),
            0);
  EXPECT_EQ(readFile(d + "/right-left/test.scores"), readFile(d + "/right-left/test-other.scores"));
  EXPECT_EQ(linesOf(readFile(d + "/right-left/test.scores")).size(), linesOf(readFile(d + "/test.src")).size());
}
