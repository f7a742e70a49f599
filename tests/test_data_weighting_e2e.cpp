// Marian's --data-weighting end to end on the synthetic corpus: weights of 1 train exactly as no
// weights (a sentence's, a word's with and without </s>'s, a streamed corpus); a weight of 2
// doubles each label's cost and its gradient (with SGD the same parameters as twice the learning
// rate: Costs twice to the printed digit, validation unweighted and the same); a word's weights
// equal to its sentence's weigh as the sentence's; a TSV field serves as a file; a resume goes on
// exactly; two ranks under mpirun train as two ranks in one process; bad weights are errors
// naming the file and line. The data layer's cases: test_data_weights.cpp. Real Marian's Costs
// with weights: bench/trajectory-vs-marian --args.
#include <fstream>

#include "e2e_helpers.h"

namespace {

using e2e::costs;
using e2e::readFile;
using e2e::RunResult;

std::vector<std::string> lines(const std::string& path) { return e2e::linesOf(readFile(path)); }
size_t tokens(const std::string& line) { return size_t(std::count(line.begin(), line.end(), ' ')) + 1; }

// A weights file beside the corpus: `weight(line, tokens)` gives each line's text.
std::string weightsFile(const std::string& name, const std::function<std::string(size_t, size_t)>& weight) {
  std::string path = e2e::corpusDir() + "/" + name;
  std::ofstream out(path);
  std::vector<std::string> targets = lines(e2e::corpusDir() + "/train.trg");
  for(size_t i = 0; i < targets.size(); ++i)
    out << weight(i, tokens(targets[i])) << "\n";
  return path;
}
std::string repeated(const std::string& w, size_t n) {
  std::string s;
  for(size_t i = 0; i < n; ++i)
    s += (i ? " " : "") + w;
  return s;
}
// a weight a sentence from 0.5, 1 and 1.5, by line
std::string sentenceWeight(size_t line) { return line % 3 == 0 ? "0.5" : line % 3 == 1 ? "1" : "1.5"; }

// SGD without clipping: a gradient twice as large moves the parameters as twice the rate does
const std::string kRun = " --after-batches 12 --disp-freq 3 --optimizer sgd --learn-rate 0.001 --clip-norm 0 ";

RunResult trained(const std::string& name, const std::string& extra) {
  RunResult r = e2e::run(name, kRun + extra);
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_EQ(costs(r.log).size(), 4u) << r.log;
  return r;
}

}  // namespace

TEST(DataWeighting, WeightsOfOneTrainAsNone) {
  RunResult none = trained("weights-none", "");
  std::string ones = weightsFile("ones.w", [](size_t, size_t) { return "1"; });
  std::string words = weightsFile("ones.ww", [](size_t, size_t n) { return repeated("1", n + 1); });
  std::string wordsNoEos = weightsFile("ones-no-eos.ww", [](size_t, size_t n) { return repeated("1", n); });
  EXPECT_EQ(costs(trained("weights-ones", "--data-weighting " + ones).log), costs(none.log));
  EXPECT_EQ(costs(trained("weights-ones-words", "--data-weighting " + words + " --data-weighting-type word").log),
            costs(none.log));
  EXPECT_EQ(costs(trained("weights-ones-no-eos",
                          "--data-weighting " + wordsNoEos + " --data-weighting-type word").log),
            costs(none.log));
}

// With SGD, loss x 2 moves the parameters as learning rate x 2 does (both powers of two: exact),
// so every displayed Cost of the weighted run is twice the other's and validation, which is not
// weighted, gives the same cross-entropy.
TEST(DataWeighting, AWeightOfTwoDoublesTheCostAndTheGradient) {
  std::string twos = weightsFile("twos.w", [](size_t, size_t) { return "2"; });
  std::string valid = " --valid-freq 12 --valid-metrics cross-entropy" + e2e::validation();
  RunResult weighted = trained("weights-twos", "--data-weighting " + twos + valid);
  RunResult faster = trained("weights-none-2lr", "--learn-rate 0.002" + valid);
  EXPECT_EQ(e2e::validCE(weighted.log), e2e::validCE(faster.log));
  EXPECT_EQ(e2e::validCE(weighted.log).size(), 1u) << weighted.log;
  auto a = costs(weighted.log), b = costs(faster.log);
  ASSERT_EQ(a.size(), b.size());
  for(size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(std::stod(a[i].second), 2 * std::stod(b[i].second), 2e-7 * std::stod(a[i].second))
        << "update " << a[i].first;
  // the labels counted are the corpus's, not weighted (Marian's): "Cost C * LABELS @ LABELS after LABELS"
  std::regex labels("Up\\. (\\d+) : .* \\* ([0-9,]+ @ [0-9,]+ after [0-9,]+)");
  EXPECT_EQ(e2e::displayed(weighted.log, labels), e2e::displayed(faster.log, labels));
  EXPECT_EQ(e2e::displayed(weighted.log, labels).size(), 4u) << weighted.log;
}

// Each token of a sentence weighted with the sentence's weight is the sentence weighted; weights of
// 0.5, 1 and 1.5 change the Costs from those without.
TEST(DataWeighting, AWordsWeightsEqualToItsSentencesWeighAsTheSentence) {
  std::string sentences = weightsFile("mixed.w", [](size_t i, size_t) { return sentenceWeight(i); });
  std::string words = weightsFile("mixed.ww", [](size_t i, size_t n) { return repeated(sentenceWeight(i), n + 1); });
  RunResult bySentence = trained("weights-mixed", "--data-weighting " + sentences);
  RunResult byWord = trained("weights-mixed-words", "--data-weighting " + words + " --data-weighting-type word");
  EXPECT_EQ(costs(byWord.log), costs(bySentence.log));
  EXPECT_NE(costs(bySentence.log), costs(trained("weights-none", "").log));
}

// The weights as a TSV field (any of the three) train as the same weights in a file; a corpus
// streamed from disk in windows carries them; a run stopped and resumed gives the Costs of the
// whole run.
TEST(DataWeighting, TsvFieldsStreamedCorpusAndResume) {
  std::string d = e2e::corpusDir();
  std::string weights = weightsFile("mixed.w", [](size_t i, size_t) { return sentenceWeight(i); });
  RunResult files = trained("weights-mixed", "--data-weighting " + weights);
  std::vector<std::string> src = lines(d + "/train.src"), trg = lines(d + "/train.trg");
  for(int field : {0, 2}) {
    SCOPED_TRACE(field);
    std::string tsv = d + "/weighted" + std::to_string(field) + ".tsv";
    {
      std::ofstream out(tsv);
      for(size_t i = 0; i < src.size(); ++i)
        out << (field == 0 ? sentenceWeight(i) + "\t" + src[i] + "\t" + trg[i]
                           : src[i] + "\t" + trg[i] + "\t" + sentenceWeight(i))
            << "\n";
    }
    std::string m = d + "/weights-tsv" + std::to_string(field);
    std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
    std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --tsv --train-sets " + tsv + " --vocabs " + d +
                      "/vocab.src.yml " + d + "/vocab.trg.yml --model " + m +
                      "/model.npz --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --mini-batch 16 "
                      "--maxi-batch 10 --seed 7 --overwrite --data-weighting " + std::to_string(field) + kRun +
                      " > " + m + "/log.txt 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << readFile(m + "/log.txt");
    EXPECT_EQ(costs(readFile(m + "/log.txt")), costs(files.log));
  }
  // streamed in windows of 500 pairs: weights of 1 as none, and a resume
  std::string ones = weightsFile("ones.w", [](size_t, size_t) { return "1"; });
  RunResult streamedNone = trained("weights-streamed-none", "--shuffle-window 500");
  RunResult streamed = trained("weights-streamed", "--shuffle-window 500 --data-weighting " + weights);
  EXPECT_NE(streamed.log.find("streamed from disk"), std::string::npos) << streamed.log;
  EXPECT_EQ(costs(trained("weights-streamed-ones", "--shuffle-window 500 --data-weighting " + ones).log),
            costs(streamedNone.log));
  ASSERT_EQ(e2e::run("weights-resumed", kRun + "--shuffle-window 500 --data-weighting " + weights +
                                            " --after-batches 6").status,
            0);
  RunResult resumed = e2e::run("weights-resumed", kRun + "--shuffle-window 500 --data-weighting " + weights,
                               /*fresh=*/false);
  ASSERT_EQ(resumed.status, 0) << resumed.log;
  auto whole = costs(streamed.log), rest = costs(resumed.log);
  ASSERT_EQ(rest.size(), 2u) << resumed.log;
  EXPECT_EQ(rest[0], whole[2]);
  EXPECT_EQ(rest[1], whole[3]);
  // other weights on resume: the corpus is the same, so training goes on where it stood with them
  // (as Marian's), and its Costs are those weights'
  ASSERT_EQ(e2e::run("weights-reweighted", kRun + "--shuffle-window 500 --data-weighting " + weights +
                                               " --after-batches 6").status,
            0);
  RunResult reweighted = e2e::run("weights-reweighted", kRun + "--shuffle-window 500 --data-weighting " + ones,
                                  /*fresh=*/false);
  ASSERT_EQ(reweighted.status, 0) << reweighted.log;
  auto other = costs(reweighted.log);
  ASSERT_EQ(other.size(), 2u) << reweighted.log;
  EXPECT_EQ(other[0].first, 9);
  EXPECT_NE(other[0].second, whole[2].second);
}

// Each rank reads its share's weights: two ranks under mpirun give the Costs of two ranks in one
// process (whose equality to mpirun's without weights test_ranks_in_process_e2e checks).
TEST(DataWeighting, TwoRanksUnderMpirunTrainAsTwoRanksInOneProcess) {
  std::string weights = weightsFile("mixed.w", [](size_t i, size_t) { return sentenceWeight(i); });
  RunResult mpi = e2e::run("weights-mpi", kRun + "--sync-sgd --data-weighting " + weights, true, e2e::mpirun(2));
  ASSERT_EQ(mpi.status, 0) << mpi.log;
  RunResult threads = trained("weights-in-process", "--sync-sgd --ranks-in-process 2 --data-weighting " + weights);
  EXPECT_EQ(costs(mpi.log), costs(threads.log));
  EXPECT_EQ(costs(mpi.log).size(), 4u) << mpi.log;
}

TEST(DataWeighting, BadWeightsAreErrorsThatNameThem) {
  std::string d = e2e::corpusDir();
  std::string shortFile = weightsFile("short.w", [](size_t, size_t) { return "1"; });
  std::system(("sed -i '$d' " + shortFile).c_str());
  std::string word = weightsFile("bad-word.w", [](size_t i, size_t) { return i == 4 ? "1 x" : "1"; });
  std::string two = weightsFile("two.w", [](size_t i, size_t) { return i == 6 ? "1 2" : "1"; });
  std::string count = weightsFile("count.ww", [](size_t i, size_t n) { return repeated("1", i == 9 ? n + 2 : n); });
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--data-weighting " + d + "/none.w", "Weights file '" + d + "/none.w' (--data-weighting) does not exist"},
      {"--data-weighting " + shortFile, "differ in length"},
      {"--data-weighting " + word, "line 5 is not a list of weights (numbers separated by spaces): '1 x'"},
      {"--data-weighting " + two, "line 7 has 2 weights: --data-weighting-type sentence takes one a line"},
      {"--data-weighting " + count + " --data-weighting-type word", "Weights file '" + count + "' line 10 has "},
      {"--tsv --train-sets " + d + "/train.src --data-weighting 3", "--data-weighting '3' with --tsv: the index (0-based) of the TSV field"},
      {"--data-weighting " + count + " --data-weighting-type phrase", "--data-weighting-type must be sentence or word"},
  };
  for(const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    RunResult r = e2e::run("weights-bad", kRun + args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.log.find(message), std::string::npos) << r.log;
  }
}
