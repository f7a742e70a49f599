// Marian's options that users' configs carry (issue 20), each doing what Marian's does, end to
// end on the synthetic corpus: --version, --log-level, --valid-log, --quiet-translation,
// bleu-detok, --early-stopping-on, --max-length-crop, --no-restore-corpus, --shuffle-in-ram, gelu,
// --sentencepiece-options, --sentencepiece-max-lines, --tempdir.
#include "e2e_helpers.h"

namespace {

using e2e::readFile;
using e2e::RunResult;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for(size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(MarianOptions, VersionAndLogLevel) {
  RunResult version = e2e::run("version", "--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.log.find("marian-mn v"), std::string::npos) << version.log;
  RunResult warn = e2e::run("loglevel", "--after-batches 2 --log-level warn");
  EXPECT_EQ(warn.status, 0) << warn.log;
  EXPECT_EQ(warn.log.find("Ep. "), std::string::npos) << warn.log;  // info lines dropped
  RunResult bad = e2e::run("loglevel-bad", "--after-batches 2 --log-level verbose");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("--log-level must be"), std::string::npos) << bad.log;
  RunResult badLog = e2e::run("log-bad", "--after-batches 2 --log /nonexistent/dir/train.log");
  EXPECT_NE(badLog.status, 0);
  EXPECT_NE(badLog.log.find("Cannot open the log file '/nonexistent/dir/train.log'"), std::string::npos) << badLog.log;
}

TEST(MarianOptions, ValidLogBleuDetokAndEarlyStoppingOn) {
  std::string m = e2e::corpusDir() + "/validlog";
  RunResult r = e2e::run("validlog", "--after-batches 40 --valid-freq 10 --valid-metrics cross-entropy bleu-detok "
                                     "--quiet-translation --early-stopping 1 --early-stopping-on any --valid-log " +
                                         m + "/valid.log" + e2e::validation());
  ASSERT_EQ(r.status, 0) << r.log;
  std::string valid = readFile(m + "/valid.log");
  EXPECT_GE(count(valid, "[valid]"), 2) << valid;
  EXPECT_EQ(valid.find("Ep. 1 : Up. 10 : Sen."), std::string::npos) << valid;  // only validation lines
  EXPECT_NE(valid.find(": bleu-detok : "), std::string::npos) << valid;
  // BLEU of a barely trained model stalls at once: with "any" one stall of it stops training
  if(r.log.find("stalled 1 times") != std::string::npos)
    EXPECT_NE(r.log.find("Training stops: bleu-detok stalled 1 times (--early-stopping-on any)"), std::string::npos)
        << r.log;
  RunResult bad = e2e::run("stopping-bad", "--after-batches 2 --early-stopping-on some" + e2e::validation());
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("--early-stopping-on must be first, all or any"), std::string::npos) << bad.log;
}

TEST(MarianOptions, MaxLengthCropKeepsLongPairs) {
  RunResult skip = e2e::run("crop-off", "--after-batches 1 --max-length 8");
  RunResult crop = e2e::run("crop-on", "--after-batches 1 --max-length 8 --max-length-crop");
  ASSERT_EQ(skip.status, 0) << skip.log;
  ASSERT_EQ(crop.status, 0) << crop.log;
  EXPECT_EQ(skip.log.find("(0 longer than --max-length 8 skipped"), std::string::npos) << skip.log;
  EXPECT_NE(crop.log.find("Training corpus: 2,000 sentence pairs (0 longer than --max-length 8 skipped"),
            std::string::npos) << crop.log;
}

TEST(MarianOptions, SentencePieceTrainingOptions) {
  std::string m = e2e::corpusDir() + "/spm";
  std::string spm = " --vocabs " + m + "/v.spm " + m + "/v.spm --dim-vocabs 150 150 --sentencepiece-max-lines 300 ";
  RunResult bad = e2e::run("spm", spm + "--after-batches 1 --tempdir /nonexistent/tmp");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("/nonexistent/tmp/marian-spm-sample."), std::string::npos) << bad.log;
  RunResult r = e2e::run("spm", spm + "--after-batches 1 --sentencepiece-options '--model_type=bpe'");
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("of 150 pieces on 300 lines"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("--model_type=bpe"), std::string::npos) << r.log;  // spm_train's own log
}

TEST(MarianOptions, GeluTrains) {
  RunResult r = e2e::run("gelu", "--after-batches 20 --disp-freq 10 --transformer-ffn-activation gelu");
  ASSERT_EQ(r.status, 0) << r.log;
  auto c = e2e::costs(r.log);
  ASSERT_EQ(c.size(), 2u) << r.log;
  EXPECT_LT(std::stod(c[1].second), std::stod(c[0].second)) << r.log;
}

TEST(MarianOptions, NoRestoreCorpusStartsTheEpochAgain) {
  RunResult first = e2e::run("norestore", "--after-batches 5 --shuffle-in-ram");
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult again = e2e::run("norestore", "--after-batches 10 --no-restore-corpus --shuffle-in-ram --disp-freq 10", false);
  ASSERT_EQ(again.status, 0) << again.log;
  // 5 resumed updates plus 5 more of 16 sentences: the epoch counted from its start again
  EXPECT_NE(again.log.find("starts again from the first sentence"), std::string::npos) << again.log;
  EXPECT_NE(again.log.find("Up. 10 : Sen. 80 :"), std::string::npos) << again.log;
}

}  // namespace
