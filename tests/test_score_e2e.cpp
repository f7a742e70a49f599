// marian-scorer end to end, on models trained briefly on the synthetic corpus (a transformer and
// an s2s): each pair's score is the log-probability marian-decoder's beam search gives the same
// translation (an independent computation: step by step, from the decoder's state); the summaries
// are the validator's cross-entropies; --normalize, --word-scores and the n-best feature follow
// from the scores; batching, sorting and devices change no score and keep the order; TSV and .gz
// inputs and outputs; bad inputs are errors that name the problem.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e_helpers.h"

namespace {

using e2e::corpusDir;
using e2e::linesOf;
using e2e::readFile;

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }


// A model `name` trained for 60 updates, validated at its end with the scorer's three summaries.
const std::string& trained(const std::string& name, const std::string& extra) {
  static std::map<std::string, std::string> done;
  if(!done.count(name)) {
    e2e::RunResult r = e2e::run(name, extra + " --after-batches 60 --valid-freq 60 --valid-mini-batch 7" +
                                          e2e::validation() + "--valid-metrics cross-entropy ce-mean-words perplexity");
    EXPECT_EQ(r.status, 0) << r.log;
    done[name] = r.log;
  }
  return done[name];
}
const std::string kS2S = "--type s2s --dim-rnn 32 ";

// marian-scorer with the model `name` and the corpus's vocabularies; stdout to `out`.
int score(const std::string& name, const std::string& args, const std::string& out) {
  std::string d = corpusDir();
  return sh(std::string(MARIAN_BIN_DIR) + "/marian-scorer -m " + d + "/" + name + "/model.npz -v " + d +
            "/vocab.src.yml " + d + "/vocab.trg.yml " + args + " > " + out + " 2> " + out + ".log");
}
std::string validPairs() { return "-t " + corpusDir() + "/valid.src " + corpusDir() + "/valid.trg "; }

// The figure a [valid] line of the training log gives for `metric`.
double validated(const std::string& log, const std::string& metric) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(log, m, std::regex("\\[valid\\] Ep\\. \\d+ : Up\\. 60 : " + metric + " : ([0-9.e+-]+)")))
      << log;
  return m.empty() ? NAN : std::stod(m[1]);
}

void expectNear(double a, double b, double relative, const std::string& what) {
  EXPECT_LE(std::fabs(a - b), relative * std::max(std::fabs(a), std::fabs(b))) << what << ": " << a << " vs " << b;
}

// Two files of plain scores: as many lines, each within `relative` of the other's.
void expectSameScores(const std::string& file, const std::string& expectedFile, double relative = 2e-6) {
  std::vector<std::string> got = linesOf(readFile(file)), expected = linesOf(readFile(expectedFile));
  ASSERT_EQ(got.size(), expected.size()) << file;
  ASSERT_FALSE(got.empty()) << file;
  for(size_t i = 0; i < got.size(); ++i)
    expectNear(std::stod(got[i]), std::stod(expected[i]), relative, file + " line " + std::to_string(i + 1));
}

}  // namespace

// The score of a translation is the log-probability beam search gave it: marian-decoder's F0 of
// each n-best entry (no normalization, no word penalty) against the scorer's feature on the same
// list, for both model types. The decoder computes it step by step from its kept state, the scorer
// in one teacher-forced pass, so they agree only if both are the model's function.
TEST(Score, EachScoreIsTheLogProbabilityBeamSearchGives) {
  for(const auto& [name, extra] : {std::pair<std::string, std::string>{"score_transformer", ""}, {"score_s2s", kS2S}}) {
    SCOPED_TRACE(name);
    trained(name, extra);
    std::string d = corpusDir(), m = d + "/" + name;
    ASSERT_EQ(sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + d + "/vocab.src.yml " + d +
                 "/vocab.trg.yml -b 4 --n-best --mini-batch 8 --maxi-batch 4 --maxi-batch-sort src < " + d +
                 "/valid.src > " + m + "/valid.nbest 2> " + m + "/decode.log"),
              0)
        << readFile(m + "/decode.log");
    std::string out = m + "/nbest.scored";
    ASSERT_EQ(score(name, "--n-best -t " + d + "/valid.src " + m + "/valid.nbest --n-best-feature Check", out), 0)
        << readFile(out + ".log");
    std::vector<std::string> given = linesOf(readFile(m + "/valid.nbest")), scored = linesOf(readFile(out));
    ASSERT_EQ(scored.size(), given.size());
    ASSERT_GT(given.size(), 100u);
    std::regex feature("^(.*) \\|\\|\\| F0= ([0-9.e+-]+) Check= ([0-9.e+-]+) \\|\\|\\| (.*)$");
    // an n-best list whose ids skip lines: each hypothesis scores as its pair with that source line
    std::vector<std::string> sources = linesOf(readFile(d + "/valid.src")), targets = linesOf(readFile(d + "/valid.trg"));
    {
      std::ofstream list(m + "/skips.nbest"), src(m + "/skips.src"), trg(m + "/skips.trg");
      for(size_t id : {3, 3, 7, 20}) {
        list << id << " ||| " << targets[id] << " ||| F0= 0 ||| 0\n";
        src << sources[id] << "\n";
        trg << targets[id] << "\n";
      }
    }
    ASSERT_EQ(score(name, "--n-best -t " + d + "/valid.src " + m + "/skips.nbest", m + "/skips.scored"), 0);
    ASSERT_EQ(score(name, "-t " + m + "/skips.src " + m + "/skips.trg", m + "/skips.pairs"), 0);
    std::vector<std::string> skips = linesOf(readFile(m + "/skips.scored")), pairs = linesOf(readFile(m + "/skips.pairs"));
    ASSERT_EQ(skips.size(), 4u);
    ASSERT_EQ(pairs.size(), 4u);
    for(size_t i = 0; i < 4; ++i) {
      std::smatch s;
      ASSERT_TRUE(std::regex_search(skips[i], s, std::regex("Score= ([0-9.e+-]+)"))) << skips[i];
      expectNear(std::stod(s[1]), std::stod(pairs[i]), 1e-5, skips[i]);
    }
    for(size_t i = 0; i < given.size(); ++i) {
      std::smatch s;
      ASSERT_TRUE(std::regex_match(scored[i], s, feature)) << scored[i];
      // the line as it was, with the feature added after the others (Marian's format)
      EXPECT_EQ(std::string(s[1]) + " ||| F0= " + std::string(s[2]) + " ||| " + std::string(s[4]), given[i]);
      expectNear(std::stod(s[3]), std::stod(s[2]), 2e-5, scored[i]);
    }
  }
}

// --summary's figures are the validator's on the same set (the training log's last validation of
// the saved model); the scores a pair sum to ce-sum; --normalize divides each by its target's
// tokens (</s> included) and --word-scores sum to the score.
TEST(Score, SummariesAreTheValidatorsAndScoresAddUp) {
  const std::string& log = trained("score_transformer", "");
  std::string m = corpusDir() + "/score_transformer";
  auto summary = [&](const std::string& type) {
    std::string out = m + "/summary." + type;
    EXPECT_EQ(score("score_transformer", validPairs() + "--summary " + type, out), 0) << readFile(out + ".log");
    return std::stod(readFile(out));
  };
  expectNear(summary("cross-entropy"), validated(log, "cross-entropy"), 3e-5, "cross-entropy");
  expectNear(summary("ce-mean-words"), validated(log, "ce-mean-words"), 3e-5, "ce-mean-words");
  expectNear(summary("perplexity"), validated(log, "perplexity"), 3e-5, "perplexity");
  EXPECT_DOUBLE_EQ(summary("ce-mean"), summary("cross-entropy"));

  ASSERT_EQ(score("score_transformer", validPairs(), m + "/plain"), 0) << readFile(m + "/plain.log");
  ASSERT_EQ(score("score_transformer", validPairs() + "--normalize --word-scores", m + "/words"), 0)
      << readFile(m + "/words.log");
  std::vector<std::string> plain = linesOf(readFile(m + "/plain")), words = linesOf(readFile(m + "/words")),
                           targets = linesOf(readFile(corpusDir() + "/valid.trg"));
  ASSERT_EQ(plain.size(), targets.size());
  ASSERT_EQ(words.size(), targets.size());
  double sum = 0;
  std::regex plainLine("^-[0-9]+\\.[0-9]{6}$");
  for(size_t i = 0; i < plain.size(); ++i) {
    SCOPED_TRACE(words[i]);
    ASSERT_TRUE(std::regex_match(plain[i], plainLine)) << plain[i];  // Marian's std::to_string
    double score = std::stod(plain[i]);
    sum += score;
    size_t bar = words[i].find(" ||| WordScores= ");
    ASSERT_NE(bar, std::string::npos);
    std::istringstream wordScores(words[i].substr(bar + 17));
    double wordSum = 0;
    size_t tokens = 0;
    for(double w; wordScores >> w; ++tokens)
      wordSum += w;
    EXPECT_EQ(tokens, size_t(std::count(targets[i].begin(), targets[i].end(), ' ')) + 2)
        << "one score per target word and </s>";
    EXPECT_NEAR(wordSum, score, 1e-5 * tokens + 2e-6 * std::fabs(score));
    expectNear(std::stod(words[i].substr(0, bar)), score / double(tokens), 2e-6, "--normalize");
  }
  expectNear(-sum, summary("ce-sum"), 1e-5, "the scores' sum");
}

// Mini-batches of one pair or 64, sorted by target, source or not at all, cut by words, on one or
// two devices, with or without a maxi-batch window: the same scores in the input's order.
TEST(Score, BatchingSortingAndDevicesKeepScoresAndOrder) {
  trained("score_s2s", kS2S);
  std::string m = corpusDir() + "/score_s2s";
  ASSERT_EQ(score("score_s2s", validPairs() + "--mini-batch 1 --maxi-batch-sort none", m + "/one"), 0);
  for(std::string args : {"--mini-batch 64", "--mini-batch 5 --maxi-batch 3 --maxi-batch-sort src",
                          "--mini-batch-words 40 --cpu-threads 2", "--mini-batch 7 --maxi-batch 1 --cpu-threads 2"}) {
    SCOPED_TRACE(args);
    ASSERT_EQ(score("score_s2s", validPairs() + args, m + "/other"), 0) << readFile(m + "/other.log");
    expectSameScores(m + "/other", m + "/one");
  }
}

// One --tsv file scores as the two files do; .gz inputs are read and an output named .gz written
// gzip-compressed, as Marian's.
TEST(Score, TsvAndGzInputsAndGzOutput) {
  trained("score_transformer", "");
  std::string d = corpusDir(), m = d + "/score_transformer";
  ASSERT_EQ(score("score_transformer", validPairs(), m + "/files"), 0);
  ASSERT_EQ(sh("paste " + d + "/valid.src " + d + "/valid.trg > " + m + "/valid.tsv && gzip -kf " + m + "/valid.tsv"), 0);
  ASSERT_EQ(score("score_transformer", "--tsv -t " + m + "/valid.tsv.gz -o " + m + "/tsv.gz", m + "/tsv.stdout"), 0)
      << readFile(m + "/tsv.stdout.log");
  EXPECT_EQ(readFile(m + "/tsv.stdout"), "");
  ASSERT_EQ(sh("gzip -dc " + m + "/tsv.gz > " + m + "/tsv"), 0);
  expectSameScores(m + "/tsv", m + "/files");
}

// Every bad input stops the scorer with an error that names it.
TEST(Score, BadInputsAreErrorsThatNameThem) {
  trained("score_transformer", "");
  std::string d = corpusDir(), m = d + "/score_transformer";
  ASSERT_EQ(sh("head -n 5 " + d + "/valid.trg > " + m + "/short.trg && printf '0 ||| a b\\n' > " + m +
               "/fields.nbest && printf '1 ||| a ||| F0= 1 ||| 1\\n0 ||| b ||| F0= 1 ||| 1\\n' > " + m +
               "/order.nbest && printf '99999 ||| a ||| F0= 1 ||| 1\\n' > " + m + "/past.nbest && printf "
               "'a\\tb\\tc\\n' > " + m + "/three.tsv"),
            0);
  std::string valid = validPairs();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-t " + d + "/valid.src " + m + "/short.trg", "differ in length: the target ends after 5 lines"},
      {"-t " + d + "/valid.src " + m + "/missing.trg", "Target file '" + m + "/missing.trg' cannot be opened"},
      {"-t " + d + "/valid.src", "Give a source and a target file"},
      {"", "Give the pairs to score with -t/--train-sets"},
      {valid + "--max-length 3", "tokens (</s> included), more than --max-length 3: give --max-length-crop"},
      {valid + "--summary -n", "--normalize cannot be used with --summary"},
      {valid + "--summary --word-scores", "--word-scores cannot be used with --summary"},
      {valid + "--summary bleu", "--summary must be cross-entropy, ce-mean, ce-mean-words, ce-sum or perplexity"},
      {valid + "--alignment diagonal", "--alignment 'diagonal': hard, soft, or a threshold in (0, 1]"},
      {valid + "--summary --alignment", "--alignment cannot be used with --summary"},
      {valid + "--beam-size 4", "Unknown option '--beam-size'"},
      {"--n-best -t " + d + "/valid.src " + m + "/fields.nbest", "line 1 has 2 field(s), not an n-best line"},
      {"--n-best -t " + d + "/valid.src " + m + "/order.nbest", "its id 0 comes after id 1"},
      {"--n-best -t " + d + "/valid.src " + m + "/past.nbest", "its id 99999 is past the end of source file"},
      {"--tsv -t " + m + "/three.tsv", "line 1 has 3 field(s): --tsv needs a source and a target"},
  };
  for(const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    EXPECT_NE(score("score_transformer", args, m + "/bad"), 0);
    EXPECT_NE(readFile(m + "/bad.log").find(message), std::string::npos) << readFile(m + "/bad.log");
  }
  // a long pair cropped instead when asked, as Marian: scored as its first two words and </s>
  ASSERT_EQ(score("score_transformer", valid + "--max-length 3 --max-length-crop", m + "/cropped"), 0)
      << readFile(m + "/cropped.log");
  ASSERT_EQ(sh("cut -d' ' -f1-2 " + d + "/valid.src > " + m + "/two.src && cut -d' ' -f1-2 " + d + "/valid.trg > " + m +
               "/two.trg"),
            0);
  ASSERT_EQ(score("score_transformer", "-t " + m + "/two.src " + m + "/two.trg", m + "/two"), 0);
  EXPECT_EQ(linesOf(readFile(m + "/cropped")).size(), linesOf(readFile(d + "/valid.src")).size());
  expectSameScores(m + "/cropped", m + "/two");
  // a model and a vocabulary that do not exist
  std::string bin = std::string(MARIAN_BIN_DIR) + "/marian-scorer ";
  EXPECT_NE(sh(bin + "-m " + m + "/none.npz -v " + d + "/vocab.src.yml " + d + "/vocab.trg.yml " + valid + "2> " + m +
               "/bad.log"),
            0);
  EXPECT_NE(readFile(m + "/bad.log").find("Model file " + m + "/none.npz does not exist"), std::string::npos)
      << readFile(m + "/bad.log");
  EXPECT_NE(sh(bin + "-m " + m + "/model.npz -v " + d + "/vocab.src.yml " + valid + "2> " + m + "/bad.log"), 0);
  EXPECT_NE(readFile(m + "/bad.log").find("Give a source and a target vocabulary"), std::string::npos)
      << readFile(m + "/bad.log");
}
