// marian-decoder's ensembles (Marian's -m A B --weights): a model with itself at weights 0.5 and
// 0.5 translates exactly as alone (the same n-best lists, F1 = F0); two models trained apart
// rank by the weighted sum of their log-probabilities, each F_i being that model's own
// log-probability of the translation (marian-scorer's, an independent teacher-forced pass); a
// transformer and an s2s ensemble; a count of weights that is not the models', and left-to-right
// with right-to-left models, are errors.
#include <cmath>
#include <set>
#include <sstream>

#include "e2e_helpers.h"

namespace {

using e2e::corpusDir;
using e2e::fieldsOf;
using e2e::linesOf;
using e2e::readFile;

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// The model file of `name`, trained for 60 updates once per test process.
std::string trained(const std::string& name, const std::string& extra) {
  static std::set<std::string> done;
  if(done.insert(name).second) {
    e2e::RunResult r = e2e::run(name, extra + " --after-batches 60");
    EXPECT_EQ(r.status, 0) << r.log;
  }
  return corpusDir() + "/" + name + "/model.npz";
}
std::string vocabs() { return " -v " + corpusDir() + "/vocab.src.yml " + corpusDir() + "/vocab.trg.yml "; }

// marian-decoder with these models and options on the first 40 validation sentences; its output
int decode(const std::string& models, const std::string& args, const std::string& out) {
  std::string d = corpusDir();
  sh("head -40 " + d + "/valid.src > " + d + "/valid40.src");
  return sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + models + vocabs() + args + " -i " + d +
            "/valid40.src --mini-batch 8 > " + out + " 2> " + out + ".log");
}

struct Entry {
  std::string text;
  std::vector<double> features;  // F0, F1, ...
  double score;
};
std::vector<Entry> nbest(const std::string& file) {
  std::vector<Entry> out;
  for(const std::string& line : linesOf(readFile(file))) {
    std::vector<std::string> f = fieldsOf(line);
    EXPECT_EQ(f.size(), 4u) << line;
    if(f.size() != 4)
      continue;
    Entry e{f[1], {}, std::stod(f[3])};
    std::istringstream features(f[2]);
    for(std::string name, value; features >> name >> value;)
      e.features.push_back(std::stod(value));
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST(Ensemble, AModelWithItselfTranslatesAsAlone) {
  std::string a = trained("ensemble-a", "");
  std::string d = corpusDir();
  ASSERT_EQ(decode(a, "-b 3 --n-best", d + "/alone"), 0) << readFile(d + "/alone.log");
  ASSERT_EQ(decode(a + " " + a, "-b 3 --n-best --weights 0.5 0.5", d + "/twice"), 0) << readFile(d + "/twice.log");
  std::vector<Entry> alone = nbest(d + "/alone"), twice = nbest(d + "/twice");
  ASSERT_EQ(alone.size(), twice.size());
  ASSERT_GE(alone.size(), 40u);
  for(size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(twice[i].text, alone[i].text);
    ASSERT_EQ(twice[i].features.size(), 2u);
    EXPECT_EQ(twice[i].features[0], alone[i].features[0]);
    EXPECT_EQ(twice[i].features[1], alone[i].features[0]);
    EXPECT_EQ(twice[i].score, alone[i].score);
  }
}

// Each F_i is model i's log-probability of the translation (its scorer's, within float rounding
// of a step-by-step sum against a teacher-forced one), and the ensemble ranks by 0.7 F0 + 0.3 F1.
TEST(Ensemble, EachFeatureIsItsModelsLogProbabilityAndTheScoreTheirWeightedSum) {
  for(const auto& [second, extra] : {std::pair<std::string, std::string>{"ensemble-b", "--seed 8"},
                                     {"ensemble-s2s", "--type s2s --dim-rnn 32"}}) {
    SCOPED_TRACE(second);
    std::string a = trained("ensemble-a", ""), b = trained(second, extra);
    std::string d = corpusDir(), out = d + "/" + second + ".nbest";
    ASSERT_EQ(decode(a + " " + b, "-b 3 --n-best --weights 0.7 0.3", out), 0) << readFile(out + ".log");
    std::vector<Entry> entries = nbest(out);
    ASSERT_GE(entries.size(), 40u);
    for(const Entry& e : entries) {
      ASSERT_EQ(e.features.size(), 2u);
      EXPECT_NEAR(e.score, 0.7 * e.features[0] + 0.3 * e.features[1], 1e-4 * std::fabs(e.score) + 1e-5) << e.text;
    }
    // the weights 1 and 1 by default, the alignment and word scores fields as Marian's (alignment
    // from the first model)
    std::string plain = d + "/" + second + ".plain";
    ASSERT_EQ(decode(a + " " + b, "-b 3 --n-best --alignment hard --word-scores", plain), 0) << readFile(plain + ".log");
    std::vector<std::string> lines = linesOf(readFile(plain));
    ASSERT_GE(lines.size(), 40u);
    for(const std::string& line : lines) {
      std::vector<std::string> f = fieldsOf(line);
      ASSERT_EQ(f.size(), 6u) << line;  // id, text, alignment, word scores, features, score
      EXPECT_EQ(f[3].rfind("WordScores= ", 0), 0u) << line;
      std::istringstream features(f[4]);
      std::string f0, f1;
      double s0 = 0, s1 = 0;
      features >> f0 >> s0 >> f1 >> s1;
      EXPECT_EQ(f0 + f1, "F0=F1=") << line;
      EXPECT_NEAR(std::stod(f[5]), s0 + s1, 1e-4 * std::fabs(s0 + s1) + 1e-5) << line;
    }
    // the scorer's score of every entry with each model alone
    for(size_t m = 0; m < 2; ++m) {
      std::string scored = out + ".scored" + std::to_string(m);
      ASSERT_EQ(sh(std::string(MARIAN_BIN_DIR) + "/marian-scorer -m " + (m ? b : a) + vocabs() + "-t " + d +
                   "/valid40.src " + out + " --n-best > " + scored + " 2> " + scored + ".log"),
                0)
          << readFile(scored + ".log");
      std::vector<Entry> rescored = nbest(scored);
      ASSERT_EQ(rescored.size(), entries.size());
      for(size_t i = 0; i < entries.size(); ++i) {
        ASSERT_EQ(rescored[i].features.size(), 3u);  // F0, F1 and the scorer's
        EXPECT_NEAR(rescored[i].features[2], entries[i].features[m], 2e-4 + 2e-6 * std::fabs(entries[i].features[m]))
            << entries[i].text;
      }
    }
  }
}

TEST(Ensemble, MismatchedWeightsAndDirectionsAreErrors) {
  std::string a = trained("ensemble-a", ""), r2l = trained("ensemble-r2l", "--right-left");
  std::string d = corpusDir();
  EXPECT_NE(decode(a + " " + a, "--weights 1", d + "/bad"), 0);
  EXPECT_NE(readFile(d + "/bad.log").find("--weights gives 1 weight(s) for 2 model(s)"), std::string::npos)
      << readFile(d + "/bad.log");
  EXPECT_NE(decode(a + " " + r2l, "", d + "/bad"), 0);
  EXPECT_NE(readFile(d + "/bad.log").find("Left-to-right and right-to-left models cannot be used together"),
            std::string::npos)
      << readFile(d + "/bad.log");
}
