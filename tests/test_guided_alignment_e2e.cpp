// Marian's --guided-alignment end to end on the synthetic corpus: a weight of 0 trains exactly as
// none; each update counts its own lines' points (and </s>-</s>) times the weight as labels, and
// its cost grows by the weight times one guided cost (Costs of weights 0, 1 and 2 on the same
// first batch); the s2s trains with it too; a TSV field serves as a file; a streamed corpus
// resumes exactly; two ranks under mpirun train as two ranks in one process; bad alignments and
// options are errors naming them. Then --alignment: the decoder's and the scorer's alignments of a
// guided model (transformer, s2s, right-left) are its guided attention, in reading order (what a
// guided model learned to align: the relative positions). The data layer and the cost:
// test_guided_alignment.cpp. Real Marian's Costs: bench/trajectory-vs-marian --args
// "--guided-alignment FILE"; its decoder's and scorer's alignments: bench/scorer-vs-marian.
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "e2e_helpers.h"

namespace {

using e2e::costs;
using e2e::readFile;
using e2e::RunResult;

std::vector<std::string> lines(const std::string& path) { return e2e::linesOf(readFile(path)); }
size_t words(const std::string& line) { return line.empty() ? 0 : size_t(std::count(line.begin(), line.end(), ' ')) + 1; }

// Each line's alignment: target word j to source word j * S / T (shifted: the source word after
// it, or the last), and every third target word to the next source word too.
std::string alignmentOf(size_t srcWords, size_t trgWords, bool shifted = false) {
  std::string line;
  for(size_t j = 0; j < trgWords && srcWords > 0; ++j) {
    size_t i = std::min(j * srcWords / trgWords + (shifted ? 1 : 0), srcWords - 1);
    line += (line.empty() ? "" : " ") + std::to_string(i) + "-" + std::to_string(j);
    if(j % 3 == 0 && i + 1 < srcWords)
      line += " " + std::to_string(i + 1) + "-" + std::to_string(j);
  }
  return line;
}
std::vector<std::string> alignments(bool shifted = false) {
  std::string d = e2e::corpusDir();
  std::vector<std::string> src = lines(d + "/train.src"), trg = lines(d + "/train.trg"), out;
  for(size_t i = 0; i < src.size(); ++i)
    out.push_back(alignmentOf(words(src[i]), words(trg[i]), shifted));
  return out;
}
std::string alignmentFile(bool shifted = false) {
  std::string path = e2e::corpusDir() + (shifted ? "/train-shifted.aln" : "/train.aln");
  std::ofstream out(path);
  for(const std::string& a : alignments(shifted))
    out << a << "\n";
  return path;
}

const std::string kRun = " --after-batches 12 --disp-freq 3 ";

RunResult trained(const std::string& name, const std::string& extra) {
  RunResult r = e2e::run(name, kRun + extra);
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_EQ(costs(r.log).size(), 4u) << r.log;
  return r;
}

struct Counted {
  double cost;
  uint64_t counted, labels;  // the labels the cost is per, and the update's target labels
};
// Every update's display with --cost-type ce-sum --disp-label-counts: "Cost C * N @ L after ..."
std::vector<Counted> counted(const std::string& log) {
  std::vector<Counted> out;
  std::regex line("\\] Ep\\. \\d+ : Up\\. \\d+ : Sen\\. [0-9,]+ : Cost ([0-9.]+) \\* ([0-9,]+) @ ([0-9,]+) after");
  auto number = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return uint64_t(std::stoull(s));
  };
  std::istringstream in(log);
  std::smatch m;
  for(std::string l; std::getline(in, l);)
    if(std::regex_search(l, m, line))
      out.push_back({std::stod(m[1]), number(m[2]), number(m[3])});
  return out;
}

}  // namespace

TEST(GuidedAlignmentTraining, AWeightOfZeroTrainsAsNone) {
  std::string aln = alignmentFile();
  RunResult none = trained("guided-none", "");
  EXPECT_EQ(costs(trained("guided-zero", "--guided-alignment " + aln + " --guided-alignment-weight 0").log),
            costs(none.log));
  RunResult guided = trained("guided", "--guided-alignment " + aln);
  EXPECT_NE(costs(guided.log), costs(none.log));
  // the s2s: its attention guided
  std::string s2s = " --type s2s --dim-rnn 32 ";
  RunResult s2sNone = trained("guided-s2s-none", s2s);
  EXPECT_EQ(costs(trained("guided-s2s-zero", s2s + "--guided-alignment " + aln + " --guided-alignment-weight 0").log),
            costs(s2sNone.log));
  EXPECT_NE(costs(trained("guided-s2s", s2s + "--guided-alignment " + aln).log), costs(s2sNone.log));
}

// In file order (--no-shuffle, one mini-batch a maxi-batch) update k trains lines 16(k-1) to
// 16k - 1: its displayed label count is its target labels plus the weight times those lines'
// points, each with </s>-</s>; and on the first batch (the same initial weights) the summed cost
// grows by the weight times one guided cost.
TEST(GuidedAlignmentTraining, EachUpdateCountsItsLinesPointsAndAddsTheWeightedCost) {
  std::string aln = alignmentFile();
  std::vector<std::string> perLine = alignments();
  std::string inOrder = " --no-shuffle --maxi-batch 1 --disp-freq 1 --after-batches 4 --cost-type ce-sum --disp-label-counts ";
  std::vector<std::vector<Counted>> byWeight;
  for(int w : {0, 1, 2}) {
    RunResult r = e2e::run("guided-counts" + std::to_string(w),
                           inOrder + "--guided-alignment " + aln + " --guided-alignment-weight " + std::to_string(w));
    ASSERT_EQ(r.status, 0) << r.log;
    byWeight.push_back(counted(r.log));
    ASSERT_EQ(byWeight.back().size(), 4u) << r.log;
  }
  for(size_t k = 0; k < 4; ++k) {
    uint64_t points = 0;
    for(size_t i = 16 * k; i < 16 * (k + 1); ++i)
      points += words(perLine[i]) + 1;  // a point a word of the line, and </s>-</s>
    for(int w : {0, 1, 2}) {
      SCOPED_TRACE(std::to_string(k) + " " + std::to_string(w));
      const Counted& c = byWeight[size_t(w)][k];
      EXPECT_EQ(c.counted, c.labels + uint64_t(w) * points);
      EXPECT_EQ(c.labels, byWeight[0][k].labels);
    }
  }
  // the summed costs of update 1: C_w (L + w P) = CE + w G
  auto sum = [&](int w) { return byWeight[size_t(w)][0].cost * double(byWeight[size_t(w)][0].counted); };
  double guided = sum(1) - sum(0);
  EXPECT_GT(guided, 0.0);
  EXPECT_NEAR(sum(2) - sum(0), 2 * guided, 1e-6 * sum(2));
}

TEST(GuidedAlignmentTraining, TsvFieldStreamedCorpusAndResume) {
  std::string d = e2e::corpusDir();
  std::string aln = alignmentFile();
  RunResult files = trained("guided-files", "--guided-alignment " + aln);
  std::vector<std::string> src = lines(d + "/train.src"), trg = lines(d + "/train.trg"), perLine = alignments();
  std::string tsv = d + "/aligned.tsv";
  {
    std::ofstream out(tsv);
    for(size_t i = 0; i < src.size(); ++i)
      out << src[i] << "\t" << perLine[i] << "\t" << trg[i] << "\n";
  }
  std::string m = d + "/guided-tsv";
  std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --tsv --train-sets " + tsv + " --vocabs " + d +
                    "/vocab.src.yml " + d + "/vocab.trg.yml --model " + m +
                    "/model.npz --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --mini-batch 16 "
                    "--maxi-batch 10 --learn-rate 0.003 --seed 7 --overwrite --guided-alignment 1" + kRun + " > " + m +
                    "/log.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << readFile(m + "/log.txt");
  EXPECT_EQ(costs(readFile(m + "/log.txt")), costs(files.log));
  // streamed in windows of 500 pairs, resumed after update 6
  RunResult streamed = trained("guided-streamed", "--shuffle-window 500 --guided-alignment " + aln);
  EXPECT_NE(streamed.log.find("streamed from disk"), std::string::npos) << streamed.log;
  ASSERT_EQ(e2e::run("guided-resumed", kRun + "--shuffle-window 500 --guided-alignment " + aln + " --after-batches 6").status, 0);
  RunResult resumed = e2e::run("guided-resumed", kRun + "--shuffle-window 500 --guided-alignment " + aln, false);
  ASSERT_EQ(resumed.status, 0) << resumed.log;
  auto whole = costs(streamed.log), rest = costs(resumed.log);
  ASSERT_EQ(rest.size(), 2u) << resumed.log;
  EXPECT_EQ(rest[0], whole[2]);
  EXPECT_EQ(rest[1], whole[3]);
}

// Each rank reads its share's alignments: two ranks under mpirun give the Costs of two ranks in
// one process (whose equality to mpirun's without alignments test_ranks_in_process_e2e checks).
TEST(GuidedAlignmentTraining, TwoRanksUnderMpirunTrainAsTwoRanksInOneProcess) {
  std::string aln = alignmentFile();
  RunResult mpi = e2e::run("guided-mpi", kRun + "--sync-sgd --guided-alignment " + aln, true, e2e::mpirun(2));
  ASSERT_EQ(mpi.status, 0) << mpi.log;
  RunResult threads = trained("guided-in-process", "--sync-sgd --ranks-in-process 2 --guided-alignment " + aln);
  EXPECT_EQ(costs(mpi.log), costs(threads.log));
  EXPECT_EQ(costs(mpi.log).size(), 4u) << mpi.log;
}

TEST(GuidedAlignmentTraining, BadAlignmentsAndOptionsAreErrorsThatNameThem) {
  std::string d = e2e::corpusDir();
  std::vector<std::string> perLine = alignments();
  auto fileOf = [&](const std::string& name, size_t badLine, const std::string& bad) {
    std::string path = d + "/" + name;
    std::ofstream out(path);
    for(size_t i = 0; i < perLine.size(); ++i)
      out << (i == badLine ? bad : perLine[i]) << "\n";
    return path;
  };
  std::string shortFile = fileOf("short.aln", 0, "0-0");
  std::system(("sed -i '$d' " + shortFile).c_str());
  std::string text = fileOf("text.aln", 4, "0-0 one-two");
  std::string past = fileOf("past.aln", 7, "0-0 90-1");
  std::string aln = alignmentFile();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--guided-alignment " + d + "/none.aln", "Alignment file '" + d + "/none.aln' (--guided-alignment) does not exist"},
      {"--guided-alignment " + shortFile, "differ in length"},
      {"--guided-alignment " + text, "Alignment file '" + text + "' line 5 is not a list of word alignments"},
      {"--guided-alignment " + past, "Alignment file '" + past + "' line 8: the point 90-1 is past the pair's"},
      {"--tsv --train-sets " + d + "/train.src --guided-alignment 3", "--guided-alignment '3' with --tsv: the index (0-based) of the TSV field"},
      {"--tsv --train-sets " + d + "/train.src --guided-alignment 2 --data-weighting 2", "--data-weighting and --guided-alignment name the same TSV field 2"},
      {"--guided-alignment " + aln + " --guided-alignment-cost mse", "--guided-alignment-cost must be ce"},
      {"--guided-alignment " + aln + " --transformer-guided-alignment-layer 2", "--transformer-guided-alignment-layer 2: the decoder has layers 1 to 1"},
      {"--guided-alignment " + aln + " --transformer-guided-alignment-layer first", "--transformer-guided-alignment-layer 'first': last, or the number"},
  };
  for(const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    RunResult r = e2e::run("guided-bad", kRun + args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.log.find(message), std::string::npos) << r.log;
  }
}

namespace {

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }
using e2e::fieldsOf;
// "0.9,0.1 0.2,0.8": a row a target token
std::vector<std::vector<double>> softOf(const std::string& field) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(field);
  for(std::string row; in >> row;) {
    rows.emplace_back();
    std::istringstream values(row);
    for(std::string v; std::getline(values, v, ',');)
      rows.back().push_back(std::stod(v));
  }
  return rows;
}
// the points of "0-0 1-2"
std::vector<std::pair<size_t, size_t>> hardOf(const std::string& field) {
  std::vector<std::pair<size_t, size_t>> points;
  std::istringstream in(field);
  for(std::string p; in >> p;)
    points.push_back({std::stoul(p.substr(0, p.find('-'))), std::stoul(p.substr(p.find('-') + 1))});
  return points;
}

}  // namespace

// A guided model's alignments from marian-decoder (--alignment soft and hard, with an n-best list
// and word scores in Marian's field order) and from marian-scorer on the decoder's translations:
// each soft row a distribution over the source's tokens (</s> included), one a target token; the
// hard points each row's most likely source token; the scorer's forced alignment of a
// translation the decoder's own (teacher-forced in one pass against step by step); and what the
// model learned: the scorer's alignments of the reference translations are where it was guided
// (on most tokens after 200 updates), in reading order for a right-left model (guided off the
// diagonal, which a reversal of both sides would keep).
TEST(GuidedAlignmentOutput, DecoderAndScorerPrintTheGuidedAttention) {
  std::string d = e2e::corpusDir(), aln = alignmentFile(), shiftedAln = alignmentFile(true);
  sh("head -60 " + d + "/valid.src > " + d + "/valid60.src");
  sh("head -60 " + d + "/valid.trg > " + d + "/valid60.trg");
  std::vector<std::string> references = lines(d + "/valid60.trg");
  std::vector<std::string> sources = lines(d + "/valid60.src");
  const std::vector<std::tuple<std::string, std::string, bool>> models = {
      {"aligned-transformer", "--dec-depth 2", false},
      {"aligned-layer1", "--dec-depth 2 --transformer-guided-alignment-layer 1", false},
      {"aligned-s2s", "--type s2s --dim-rnn 32", false},
      {"aligned-r2l", "--right-left", true}};
  for(const auto& [name, extra, shifted] : models) {
    SCOPED_TRACE(name);
    RunResult r = e2e::run(name, " --after-batches 200 --disp-freq 100 --guided-alignment " + (shifted ? shiftedAln : aln) +
                                     " --guided-alignment-weight 1 " + extra);
    ASSERT_EQ(r.status, 0) << r.log;
    std::string m = d + "/" + name, model = " -m " + m + "/model.npz -v " + d + "/vocab.src.yml " + d + "/vocab.trg.yml ";
    std::string decoder = std::string(MARIAN_BIN_DIR) + "/marian-decoder" + model + "--mini-batch 8 -i " + d + "/valid60.src";
    ASSERT_EQ(sh(decoder + " --alignment soft --word-scores -b 3 --n-best > " + m + "/nbest 2>/dev/null"), 0);
    ASSERT_EQ(sh(decoder + " --alignment soft > " + m + "/soft 2>/dev/null"), 0);
    ASSERT_EQ(sh(decoder + " --alignment hard > " + m + "/hard 2>/dev/null"), 0);
    std::vector<std::string> nbest = lines(m + "/nbest"), soft = lines(m + "/soft"), hard = lines(m + "/hard");
    ASSERT_EQ(soft.size(), sources.size());
    ASSERT_EQ(hard.size(), sources.size());
    ASSERT_GE(nbest.size(), sources.size());
    for(const std::string& line : nbest) {  // id ||| text ||| soft ||| WordScores= ... ||| F0= ... ||| score
      std::vector<std::string> f = fieldsOf(line);
      ASSERT_EQ(f.size(), 6u) << line;
      EXPECT_EQ(f[3].rfind("WordScores= ", 0), 0u) << line;
      EXPECT_EQ(softOf(f[2]).size(), words(f[1]) + 1) << line;
    }
    // the scorer's forced alignment of each best translation
    {
      std::ofstream out(m + "/best.trg");
      for(const std::string& line : soft)
        out << fieldsOf(line)[0] << "\n";
    }
    ASSERT_EQ(sh(std::string(MARIAN_BIN_DIR) + "/marian-scorer" + model + "-t " + d + "/valid60.src " + m +
                 "/best.trg --alignment soft > " + m + "/scored 2>/dev/null"),
              0);
    std::vector<std::string> scored = lines(m + "/scored");
    ASSERT_EQ(scored.size(), sources.size());
    for(size_t i = 0; i < sources.size(); ++i) {
      std::vector<std::string> f = fieldsOf(soft[i]), h = fieldsOf(hard[i]);
      ASSERT_EQ(f.size(), 2u) << soft[i];
      EXPECT_EQ(h[0], f[0]);
      auto rows = softOf(f[1]), forced = softOf(fieldsOf(scored[i])[1]);
      size_t srcTokens = words(sources[i]) + 1, trgTokens = words(f[0]) + 1;
      ASSERT_EQ(rows.size(), trgTokens) << soft[i];
      ASSERT_EQ(forced.size(), trgTokens) << scored[i];
      std::vector<std::pair<size_t, size_t>> expectedHard;
      for(size_t t = 0; t < trgTokens; ++t) {
        ASSERT_EQ(rows[t].size(), srcTokens) << soft[i];
        ASSERT_EQ(forced[t].size(), srcTokens) << scored[i];
        double total = 0;
        for(size_t s = 0; s < srcTokens; ++s) {
          total += rows[t][s];
          EXPECT_NEAR(forced[t][s], rows[t][s], 1e-4) << "line " << i + 1 << " target " << t << " source " << s;
        }
        EXPECT_NEAR(total, 1.0, 1e-4) << soft[i];
        expectedHard.push_back({size_t(std::max_element(rows[t].begin(), rows[t].end()) - rows[t].begin()), t});
      }
      std::sort(expectedHard.begin(), expectedHard.end());
      EXPECT_EQ(hardOf(h[1]), expectedHard) << hard[i];
    }
    // the references aligned as the model was guided (alignmentOf's points, and </s> to </s>)
    ASSERT_EQ(sh(std::string(MARIAN_BIN_DIR) + "/marian-scorer" + model + "-t " + d + "/valid60.src " + d +
                 "/valid60.trg --alignment > " + m + "/references 2>/dev/null"),
              0);
    std::vector<std::string> aligned = lines(m + "/references");
    ASSERT_EQ(aligned.size(), references.size());
    size_t points = 0, asGuided = 0;
    for(size_t i = 0; i < aligned.size(); ++i) {
      size_t S = words(sources[i]), T = words(references[i]);
      std::vector<std::pair<size_t, size_t>> guided = hardOf(alignmentOf(S, T, shifted));
      guided.push_back({S, T});
      for(auto point : hardOf(fieldsOf(aligned[i])[1])) {
        ++points;
        asGuided += std::find(guided.begin(), guided.end(), point) != guided.end();
      }
    }
    EXPECT_GT(double(asGuided), 0.85 * double(points)) << asGuided << " of " << points << " points as guided";
  }
  int status = sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + d + "/aligned-transformer/model.npz -v " + d +
                  "/vocab.src.yml " + d + "/vocab.trg.yml --alignment diagonal < /dev/null > " + d + "/bad.out 2>&1");
  EXPECT_NE(status, 0);
  EXPECT_NE(readFile(d + "/bad.out").find("--alignment 'diagonal': hard, soft, or a threshold in (0, 1]"),
            std::string::npos)
      << readFile(d + "/bad.out");
}
