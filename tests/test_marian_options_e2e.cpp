// Marian's options that users' configs carry (issue 20), each doing what Marian's does, end to
// end on the synthetic corpus: --version, --log-level, --valid-log, --quiet-translation,
// bleu-detok, --early-stopping-on, --max-length-crop, --no-restore-corpus, --shuffle-in-ram, gelu,
// --sentencepiece-options, --sentencepiece-max-lines, --tempdir.
#include <filesystem>
#include <algorithm>
#include <fstream>

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

// A log begins as Marian's does: version, host and command line, then every option in effect,
// written once under mpirun (by rank 0), in the --log file too.
TEST(MarianOptions, LogBeginsWithVersionCommandLineAndOptions) {
  std::string m = e2e::corpusDir() + "/startlines";
  RunResult r = e2e::run("startlines", "--after-batches 1 --disp-freq 1 --dim-emb 48 --log " + m + "/train.log");
  ASSERT_EQ(r.status, 0) << r.log;
  for(const std::string& text : {readFile(m + "/train.log"), r.log}) {
    EXPECT_NE(text.find("] [marian] marian-mn v"), std::string::npos) << text;
    EXPECT_NE(text.find(" with command line:\n"), std::string::npos) << text;
    EXPECT_NE(text.find("/marian "), std::string::npos) << text;
    EXPECT_NE(text.find("] [config] dim-emb: 48\n"), std::string::npos) << text;
    EXPECT_NE(text.find("] [config] after-batches: 1\n"), std::string::npos) << text;
    // the display line must be there: find() of a missing one is npos, after everything
    size_t display = text.find("Ep. 1 : Up. 1 : ");
    ASSERT_NE(display, std::string::npos) << text;
    EXPECT_LT(text.rfind("[config]"), display) << text;  // every option before training
  }
  RunResult ranks = e2e::run("startlines-mpi", "--after-batches 1 --sync-sgd", true, e2e::mpirun(2));
  ASSERT_EQ(ranks.status, 0) << ranks.log;
  EXPECT_EQ(count(ranks.log, "] [config] dim-emb: "), 1) << ranks.log;
  EXPECT_EQ(count(ranks.log, " with command line:"), 1) << ranks.log;
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
  // --early-stopping-on with a second metric that stalls for certain while the first improves:
  // with learning rate 0 the cross-entropy repeats itself (stalled at the second validation); a
  // script that prints how often it ran improves every time. "any" stops at update 20, "first"
  // (the script) trains to the end.
  std::ofstream(m + "/counter.sh") << "echo x >> " << m << "/runs-$1.txt\nwc -l < " << m << "/runs-$1.txt\n";
  for(std::string on : {"any", "first"}) {
    SCOPED_TRACE("--early-stopping-on " + on);
    std::string script = " --valid-script-path 'bash " + m + "/counter.sh " + on + "'";
    RunResult stop = e2e::run("stopping-" + on, "--after-batches 40 --valid-freq 10 --learn-rate 0 --valid-metrics "
                                                "valid-script cross-entropy --early-stopping 1 --early-stopping-on " +
                                                    on + script + e2e::validation());
    ASSERT_EQ(stop.status, 0) << stop.log;
    EXPECT_NE(stop.log.find("Up. 20 : valid-script : 2 : new best"), std::string::npos) << stop.log;
    EXPECT_NE(stop.log.find("Up. 20 : cross-entropy : "), std::string::npos) << stop.log;
    EXPECT_NE(stop.log.find(" : stalled 1 times"), std::string::npos) << stop.log;
    if(on == "any") {
      EXPECT_NE(stop.log.find("Training stops: cross-entropy stalled 1 times (--early-stopping-on any)"),
                std::string::npos) << stop.log;
      EXPECT_EQ(stop.log.find("Up. 30 : valid-script"), std::string::npos) << stop.log;
    } else {
      EXPECT_EQ(stop.log.find("Training stops"), std::string::npos) << stop.log;
      EXPECT_NE(stop.log.find("Up. 40 : valid-script : 4 : new best"), std::string::npos) << stop.log;
    }
  }
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
  EXPECT_NE(crop.log.find("Training corpus: 2,000 sentence pairs in memory (0 longer than --max-length 8 skipped"),
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

// --valid-script-path with Marian's two metrics: translation (the script gets the
// --valid-script-args, then the translation file, and prints the score) and valid-script (the
// script scores MODEL.dev.npz, saved before it runs); --valid-translation-output's {U}; chrf.
TEST(MarianOptions, ValidationScriptScoresTranslationsAndModels) {
  std::string m = e2e::corpusDir() + "/validscript";
  std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
  // prints the number of lines of its last argument, after recording its arguments
  std::ofstream(m + "/lines.sh") << "echo \"$@\" >> " << m << "/args.txt\necho 'a warning first'\n"
                                 << "wc -l < \"${@: -1}\"\n";
  std::ofstream(m + "/model.sh") << "test -f " << e2e::corpusDir() << "/validscript-model/model.npz.dev.npz && echo 7.5\n";
  std::string script = " --valid-script-path 'bash " + m + "/lines.sh' --valid-script-args --flag x ";
  RunResult r = e2e::run("validscript", "--after-batches 20 --valid-freq 10 --valid-metrics translation chrf "
                                        "--keep-best --valid-translation-output " + m + "/out.{U}.txt" + script +
                                            e2e::validation(), false);
  ASSERT_EQ(r.status, 0) << r.log;
  std::string validLines = readFile(e2e::corpusDir() + "/valid.src");
  std::string lines = std::to_string(count(validLines, "\n"));
  EXPECT_NE(r.log.find("[valid] Ep. 1 : Up. 10 : translation : " + lines + " : new best"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Up. 20 : translation : " + lines + " : stalled 1 times"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find(": chrf : "), std::string::npos) << r.log;
  EXPECT_EQ(readFile(m + "/args.txt"), "--flag x " + m + "/out.10.txt\n--flag x " + m + "/out.20.txt\n");
  EXPECT_EQ(count(readFile(m + "/out.20.txt"), "\n"), count(validLines, "\n"));
  EXPECT_FALSE(readFile(m + "/model.npz.best-translation.npz").empty());
  EXPECT_FALSE(readFile(m + "/model.npz.best-chrf.npz").empty());

  RunResult model = e2e::run("validscript-model", "--after-batches 10 --valid-freq 10 --valid-metrics valid-script "
                                                  "cross-entropy --valid-script-path 'bash " + m + "/model.sh'" +
                                                      e2e::validation());
  ASSERT_EQ(model.status, 0) << model.log;
  EXPECT_NE(model.log.find("Up. 10 : valid-script : 7.5 : new best"), std::string::npos) << model.log;
  // as Marian, a script that scores the model validates without --valid-sets; --valid-freq 0
  // validates nowhere, not even at the end
  std::ofstream(m + "/model-alone.sh") << "test -f " << e2e::corpusDir()
                                       << "/validscript-alone/model.npz.dev.npz && echo 6.5\n";
  RunResult alone = e2e::run("validscript-alone", "--after-batches 10 --valid-freq 10 --valid-metrics valid-script "
                                                  "--valid-script-path 'bash " + m + "/model-alone.sh'");
  ASSERT_EQ(alone.status, 0) << alone.log;
  EXPECT_NE(alone.log.find("Up. 10 : valid-script : 6.5 : new best"), std::string::npos) << alone.log;
  RunResult needsSets = e2e::run("validscript-alone", "--after-batches 10 --valid-freq 10 --valid-metrics valid-script "
                                                      "cross-entropy --valid-script-path 'bash " + m + "/model-alone.sh'");
  EXPECT_NE(needsSets.status, 0);
  EXPECT_NE(needsSets.log.find("--valid-metrics cross-entropy needs --valid-sets"), std::string::npos) << needsSets.log;
  RunResult off = e2e::run("validscript-off", "--after-batches 10 --valid-freq 0" + e2e::validation());
  ASSERT_EQ(off.status, 0) << off.log;
  EXPECT_EQ(off.log.find("[valid]"), std::string::npos) << off.log;

  // without a script, translation is BLEU (said once); a script no metric uses is refused
  RunResult bleu = e2e::run("validscript-none", "--after-batches 10 --valid-freq 10 --valid-metrics translation" +
                                                    e2e::validation());
  ASSERT_EQ(bleu.status, 0) << bleu.log;
  EXPECT_NE(bleu.log.find("No --valid-script-path for the translation metric"), std::string::npos) << bleu.log;
  EXPECT_NE(bleu.log.find("[valid] BLEU = "), std::string::npos) << bleu.log;
  RunResult unused = e2e::run("validscript-unused", "--after-batches 1 --valid-script-path true" + e2e::validation());
  EXPECT_NE(unused.status, 0);
  EXPECT_NE(unused.log.find("no --valid-metrics uses it"), std::string::npos) << unused.log;
  RunResult noScript = e2e::run("validscript-missing", "--after-batches 1 --valid-metrics valid-script" + e2e::validation());
  EXPECT_NE(noScript.status, 0);
  EXPECT_NE(noScript.log.find("valid-script needs --valid-script-path"), std::string::npos) << noScript.log;
  // a metric named twice (its stalls were counted twice against one record): refused before the
  // corpus is read
  RunResult twice = e2e::run("metric-twice", "--after-batches 1 --valid-metrics cross-entropy perplexity "
                                             "cross-entropy" + e2e::validation());
  EXPECT_NE(twice.status, 0);
  EXPECT_NE(twice.log.find("--valid-metrics names cross-entropy twice"), std::string::npos) << twice.log;
  EXPECT_EQ(twice.log.find("Training corpus"), std::string::npos) << twice.log;
}

// --disp-freq in epochs: the line at each epoch's end (Marian leaves epoch units of --disp-freq
// unsupported; here they are its other frequencies' units)
TEST(MarianOptions, DisplayFrequencyInEpochs) {
  RunResult r = e2e::run("disp-epochs", "--after-epochs 2 --disp-freq 1e --mini-batch 64");
  ASSERT_EQ(r.status, 0) << r.log;
  auto lines = e2e::costs(r.log);
  ASSERT_EQ(lines.size(), 2u) << r.log;
  EXPECT_LT(lines[0].first, lines[1].first);
  EXPECT_EQ(lines[1].first, 2 * lines[0].first) << r.log;  // the same batches every epoch
}

// Marian's --no-reload: a folder with a model and its checkpoint trains afresh, as a new folder
// does (the same Costs), its saves overwriting the old.
TEST(MarianOptions, NoReloadStartsAfreshInAFolderWithAModel) {
  RunResult fresh = e2e::run("no-reload-fresh", "--after-batches 10");
  ASSERT_EQ(e2e::run("no-reload", "--after-batches 20").status, 0);
  RunResult again = e2e::run("no-reload", "--after-batches 10 --no-reload", /*fresh=*/false);
  ASSERT_EQ(again.status, 0) << again.log;
  EXPECT_EQ(again.log.find("Resuming from"), std::string::npos) << again.log;
  EXPECT_NE(again.log.find("--no-reload: training starts afresh"), std::string::npos) << again.log;
  EXPECT_EQ(e2e::costs(again.log), e2e::costs(fresh.log));
  EXPECT_NE(readFile(e2e::corpusDir() + "/no-reload/model.npz.progress.yml").find("batches: 10"), std::string::npos);
}

TEST(MarianOptions, AFailingValidationScriptIsAnErrorNamingIt) {
  std::string m = e2e::corpusDir();
  RunResult fails = e2e::run("script-fails", "--after-batches 10 --valid-freq 10 --valid-metrics translation "
                                             "--valid-script-path 'sh -c \"echo broken; exit 3\"'" + e2e::validation());
  EXPECT_NE(fails.status, 0);
  EXPECT_NE(fails.log.find("failed (exit status 3); its output: broken"), std::string::npos) << fails.log;
  RunResult words = e2e::run("script-words", "--after-batches 10 --valid-freq 10 --valid-metrics translation "
                                             "--valid-script-path 'echo BLEU'" + e2e::validation());
  EXPECT_NE(words.status, 0);
  EXPECT_NE(words.log.find("must print its score as a number on its last line"), std::string::npos) << words.log;
}

// The Cost as Marian shows it: ce-sum "per label * labels @ last update's after all labels",
// without label counts per update; ce-mean per sentence; ce-mean-words per label. As in Marian,
// --cost-type changes what is shown, not the gradient: the summed cross-entropy's, under which
// Adam weighs every label alike. --normalize-gradient divides each update's by its labels, which
// Adam does not cancel as the labels vary between updates (the clip is off to show Adam alone).
TEST(MarianOptions, DisplayedCostFollowsCostTypeAndLabelCounts) {
  std::regex counts("Up\\. 5 : Sen\\. 80 : Cost ([0-9.]+) \\* ([0-9,]+) @ ([0-9,]+) after ([0-9,]+) : Time");
  std::string common = "--after-batches 10 --clip-norm 0 --learn-rate 0.001";
  RunResult sum = e2e::run("disp-sum", common);
  ASSERT_EQ(sum.status, 0) << sum.log;
  std::smatch c;
  ASSERT_TRUE(std::regex_search(sum.log, c, counts)) << sum.log;
  auto number = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return std::stod(s);
  };
  EXPECT_EQ(c[2], c[4]);  // the first display: every label so far
  EXPECT_GT(number(c[2]), number(c[3]));  // 5 updates' labels, more than the last update's
  double perLabel = std::stod(c[1]), labels = number(c[2]);
  RunResult plain = e2e::run("disp-plain", common + " --disp-label-counts=false");
  RunResult mean = e2e::run("disp-mean", common + " --cost-type ce-mean");
  RunResult normalized = e2e::run("disp-normalized", common + " --cost-type ce-mean-words --normalize-gradient");
  ASSERT_EQ(plain.status, 0) << plain.log;
  ASSERT_EQ(mean.status, 0) << mean.log;
  EXPECT_EQ(plain.log.find(" @ "), std::string::npos) << plain.log;
  double perUpdate = std::stod(e2e::costs(plain.log)[0].second);
  EXPECT_NEAR(perUpdate, perLabel * labels / 5, 1e-3 * perUpdate);  // the same run, shown per update
  double perSentence = std::stod(e2e::costs(mean.log)[0].second);
  EXPECT_GT(perSentence, 2 * perLabel);  // sentences of several labels
  ASSERT_EQ(normalized.status, 0) << normalized.log;
  std::string m = e2e::corpusDir() + "/";
  double sameGradient = e2e::largestParameterDifference(m + "disp-sum/model.npz", m + "disp-mean/model.npz");
  double normalizedGradient = e2e::largestParameterDifference(m + "disp-sum/model.npz", m + "disp-normalized/model.npz");
  EXPECT_GE(sameGradient, 0.0) << "the models could not be compared";
  EXPECT_LT(sameGradient, 1e-6);
  EXPECT_GT(normalizedGradient, 1e-3);  // 0.0054 measured
  RunResult unknown = e2e::run("disp-unknown", "--after-batches 1 --cost-type ce-mean-sentences");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.log.find("--cost-type must be ce-sum, ce-mean or ce-mean-words, not 'ce-mean-sentences'"),
            std::string::npos) << unknown.log;
}

// --lr-warmup in epochs as Marian counts it (the epoch's number over N), Marian's multipliers,
// Marian's "Starting data epoch" line, --overwrite-checkpoint false keeping a full checkpoint with every iteration's
// model, and --after's list of criteria.
TEST(MarianOptions, EpochWarmupMultipliersAndIterationCheckpoints) {
  RunResult r = e2e::run("warmup-epochs", "--after-epochs 2 --mini-batch 500 --disp-freq 1 --learn-rate 0.002 "
                                          "--lr-warmup 2e --lr-report");
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("Ep. 1 : Up. 4 : Sen. 2,000 : "), std::string::npos) << r.log;
  // Marian's line between epochs (the last epoch ends the training instead)
  EXPECT_EQ(count(r.log, "Starting data epoch 2 in logical epoch 2\n"), 1) << r.log;
  EXPECT_EQ(count(r.log, "Starting data epoch"), 1) << r.log;
  std::regex lr("Ep\\. (\\d) : Up\\. \\d+ : .* L\\.r\\. ([0-9.e+-]+)");
  int seen = 0;
  for(std::sregex_iterator it(r.log.begin(), r.log.end(), lr), end; it != end; ++it, ++seen)
    EXPECT_FLOAT_EQ(std::stof((*it)[2]), (*it)[1] == "1" ? 0.001f : 0.002f) << (*it)[0];
  EXPECT_EQ(seen, 8) << r.log;
  std::string m = e2e::corpusDir() + "/iter-checkpoints";
  RunResult keep = e2e::run("iter-checkpoints", "--after-batches 9 --save-freq 4 --overwrite=false "
                                                "--overwrite-checkpoint=false");
  ASSERT_EQ(keep.status, 0) << keep.log;
  for(std::string it : {"4", "8"}) {
    EXPECT_FALSE(readFile(m + "/model.iter" + it + ".npz").empty()) << it;
    EXPECT_FALSE(readFile(m + "/model.iter" + it + ".npz.optimizer.npz").empty()) << it;
    EXPECT_NE(readFile(m + "/model.iter" + it + ".npz.progress.yml").find("batches: " + it), std::string::npos) << it;
    // as Marian, its decoder configuration beside it
    EXPECT_NE(readFile(m + "/model.iter" + it + ".npz.decoder.yml").find("model.iter" + it + ".npz"), std::string::npos)
        << it;
  }
  // the final save (update 9) writes the model, not an iteration copy, as Marian's
  EXPECT_FALSE(std::filesystem::exists(m + "/model.iter9.npz"));
  EXPECT_NE(readFile(m + "/model.npz.progress.yml").find("batches: 9"), std::string::npos);
  // Marian's --after list: the first criterion met stops training (6 updates before 10 epochs)
  RunResult list = e2e::run("after-list", "--after 10e,6u --disp-freq 1");
  ASSERT_EQ(list.status, 0) << list.log;
  EXPECT_NE(list.log.find(" : Up. 6 : "), std::string::npos) << list.log;
  EXPECT_EQ(list.log.find(" : Up. 7 : "), std::string::npos) << list.log;
  RunResult bad = e2e::run("warmup-bad", "--after-batches 1 --lr-warmup 1.5Ku5");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("'1.5Ku5' is not a whole count"), std::string::npos) << bad.log;
}

// --pretrained-model: a new training starts from another model's weights, whatever its seed (its
// validation after a first update at rate 0, in the warm-up, is the other model's); parameters the
// file lacks are drawn and named; a parameter of another shape, or a missing file, is an error
// naming it; a resume takes its checkpoint's weights and does not read the file.
TEST(MarianOptions, PretrainedModelStartsANewTrainingFromItsWeights) {
  std::string dir = e2e::corpusDir();
  RunResult from = e2e::run("pretrained-from", "--after-batches 6 --valid-freq 6" + e2e::validation());
  ASSERT_EQ(from.status, 0) << from.log;
  std::regex ce("\\[valid\\] Ep\\. \\d+ : Up\\. (\\d+) : cross-entropy : ([0-9.]+)");
  auto lastCe = [&](const std::string& log) {
    std::string v;
    for(std::sregex_iterator it(log.begin(), log.end(), ce), end; it != end; ++it)
      v = (*it)[2];
    return v;
  };
  std::string file = dir + "/pretrained-from/model.npz";
  RunResult started = e2e::run("pretrained-to", "--seed 99 --after-batches 1 --lr-warmup 10 --valid-freq 1 "
                                                "--pretrained-model " + file + e2e::validation());
  ASSERT_EQ(started.status, 0) << started.log;
  EXPECT_NE(started.log.find("Initializing model weights with pre-trained model " + file), std::string::npos)
      << started.log;
  ASSERT_FALSE(lastCe(from.log).empty()) << from.log;
  EXPECT_EQ(lastCe(started.log), lastCe(from.log)) << started.log;

  RunResult deeper = e2e::run("pretrained-deeper", "--after-batches 1 --dec-depth 2 --pretrained-model " + file);
  ASSERT_EQ(deeper.status, 0) << deeper.log;
  EXPECT_NE(deeper.log.find("the others drawn as usual (decoder_l2_"), std::string::npos) << deeper.log;
  RunResult wider = e2e::run("pretrained-wider", "--after-batches 1 --dim-emb 16 --pretrained-model " + file);
  EXPECT_NE(wider.status, 0);
  EXPECT_NE(wider.log.find("Model file '" + file + "': parameter '"), std::string::npos) << wider.log;
  EXPECT_NE(wider.log.find("has shape"), std::string::npos) << wider.log;
  RunResult missing = e2e::run("pretrained-missing", "--after-batches 1 --pretrained-model " + dir + "/none.npz");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.log.find(dir + "/none.npz"), std::string::npos) << missing.log;

  RunResult resumed = e2e::run("pretrained-to", "--seed 99 --after-batches 2 --lr-warmup 10 --pretrained-model " +
                                                    dir + "/none.npz", /*fresh=*/false);
  ASSERT_EQ(resumed.status, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("Resuming: --pretrained-model " + dir + "/none.npz is not read"), std::string::npos)
      << resumed.log;
}

// marian-decoder with Marian's --word-scores (one score per token, </s> included, adding up to
// F0), --mini-batch-words (same translations), --ignore-model-config (the architecture from the
// command line), --allow-unk, and --alignment (a field added, the translations unchanged).
TEST(MarianOptions, DecoderOptionsOfMarian) {
  RunResult trained = e2e::run("decopts", "--after-batches 30");
  ASSERT_EQ(trained.status, 0) << trained.log;
  std::string d = e2e::corpusDir(), m = d + "/decopts";
  auto decode = [&](const std::string& extra, const std::string& out) {
    return std::system((std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + d +
                        "/vocab.src.yml " + d + "/vocab.trg.yml -i " + d + "/valid.src " + extra + " > " + out +
                        " 2> " + out + ".log").c_str());
  };
  ASSERT_EQ(decode("-b 3 --n-best --word-scores", m + "/nbest"), 0) << readFile(m + "/nbest.log");
  std::regex entry("^\\d+ \\|\\|\\| [^|]* \\|\\|\\| WordScores=((?: -?[0-9]+\\.[0-9]{5})+) \\|\\|\\| F0= (\\S+) \\|\\|\\| \\S+$");
  std::istringstream lines(readFile(m + "/nbest"));
  int entries = 0;
  for(std::string l; std::getline(lines, l); ++entries) {
    std::smatch e;
    ASSERT_TRUE(std::regex_match(l, e, entry)) << l;
    std::istringstream scores(e[1].str());
    double sum = 0;
    for(double v; scores >> v;)
      sum += v;
    EXPECT_NEAR(sum, std::stod(e[2]), 1e-3 * std::max(1.0, std::abs(sum))) << l;
  }
  EXPECT_GT(entries, 0);

  ASSERT_EQ(decode("-b 2", m + "/one"), 0) << readFile(m + "/one.log");
  ASSERT_EQ(decode("-b 2 --mini-batch-words 60 --maxi-batch 4 --maxi-batch-sort src --allow-unk", m + "/words"), 0)
      << readFile(m + "/words.log");
  EXPECT_EQ(readFile(m + "/words"), readFile(m + "/one"));
  ASSERT_EQ(decode("-b 2 --ignore-model-config --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2", m + "/ignore"), 0)
      << readFile(m + "/ignore.log");
  EXPECT_EQ(readFile(m + "/ignore"), readFile(m + "/one"));
  EXPECT_NE(decode("-b 2 --ignore-model-config", m + "/ignore-bad"), 0);  // dim-emb 512 is not the model's
  EXPECT_NE(readFile(m + "/ignore-bad.log").find("encoder_Wemb"), std::string::npos) << readFile(m + "/ignore-bad.log");
  // --alignment adds a field to each line and changes no translation
  ASSERT_EQ(decode("-b 2 --alignment hard", m + "/align"), 0) << readFile(m + "/align.log");
  std::vector<std::string> aligned = e2e::linesOf(readFile(m + "/align")), plain = e2e::linesOf(readFile(m + "/one"));
  ASSERT_EQ(aligned.size(), plain.size());
  for(size_t i = 0; i < aligned.size(); ++i)
    EXPECT_EQ(aligned[i].substr(0, aligned[i].find(" ||| ")), plain[i]);
  EXPECT_NE(decode("--alignment diagonal", m + "/align-bad"), 0);
  EXPECT_NE(readFile(m + "/align-bad.log").find("--alignment 'diagonal': hard, soft, or a threshold"), std::string::npos)
      << readFile(m + "/align-bad.log");
}

// A SentencePiece vocabulary with spm_train's special ids (</s> = 2, <unk> = 0) trains, validates
// by translation and decodes: sentences end with its </s>.
TEST(MarianOptions, SentencePieceWithItsOwnSpecialIdsTrainsAndDecodes) {
  std::string d = e2e::corpusDir(), m = d + "/spm-ids";
  std::string spm = " --vocabs " + m + "/v.spm " + m + "/v.spm --dim-vocabs 120 120 "
                    "--sentencepiece-options '--unk_id=0 --bos_id=1 --eos_id=2' ";
  // the length cap per sentence on both sides: a 20-update model runs into it, and Marian's cap per
  // mini-batch would then depend on how validation (32 sentences) and the decoder (1) batch
  const std::string cap = "--max-length-factor-per-sentence ";
  RunResult r = e2e::run("spm-ids", spm + cap + "--after-batches 20 --valid-freq 20 --beam-size 2 --valid-metrics cross-entropy bleu "
                                          "--valid-translation-output " + m + "/valid.out" + e2e::validation());
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("Up. 20 : bleu : "), std::string::npos) << r.log;
  std::string out = m + "/decoded";
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + m + "/v.spm " + m +
                    "/v.spm -i " + d + "/valid.src -b 2 " + cap + "> " + out + " 2> " + out + ".log";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << readFile(out + ".log");
  EXPECT_EQ(count(readFile(out), "\n"), count(readFile(d + "/valid.src"), "\n"));
  EXPECT_EQ(readFile(out), readFile(m + "/valid.out"));  // validation translated alike (beam 2 both)
}

// marian-examples' transformer recipe (examples/multi30k/marian-examples-transformer.sh: its
// training and decoder commands as Marian's run-me.sh has them, paths adapted) runs: here on the
// synthetic corpus laid out as Multi30k's files, with options appended that make the model tiny
// and the run 2 updates long (a save every 2: the final save writes no iteration copy, as
// Marian's). It fits its batches (--mini-batch-fit), validates with the script and the translation
// metric, saves model.iter2.npz, picks it from valid.log and decodes with it.
TEST(MarianOptions, MarianExamplesTransformerRecipeRuns) {
  std::string d = e2e::corpusDir(), data = d + "/mex-data", model = d + "/mex-model";
  std::string prepare = "rm -rf " + data + " " + model + " && mkdir -p " + data + " && cd " + d +
                        " && gzip -c train.src > " + data + "/train.de.gz && gzip -c train.trg > " + data +
                        "/train.en.gz && head -30 valid.src | gzip > " + data + "/val.de.gz && head -30 valid.trg | gzip > " +
                        data + "/val.en.gz && head -20 test.src | gzip > " + data +
                        "/test_2016_flickr.de.gz && head -20 test.trg | gzip > " + data + "/test_2016_flickr.en.gz";
  ASSERT_EQ(std::system(prepare.c_str()), 0);
  std::string cmd = "MULTI30K_DATA=" + data + " MODEL_DIR=" + model + " MARIAN_BIN=" + std::string(MARIAN_BIN_DIR) +
                    " " MARIAN_SOURCE_DIR "/examples/multi30k/marian-examples-transformer.sh --after-batches 2 --save-freq 2 "
                    "--dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --enc-depth 1 --dec-depth 1 -w 64 "
                    "--dim-vocabs 120 120 --disp-freq 1 > " + d + "/mex.out 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << readFile(d + "/mex.out") << readFile(model + "/train.log");
  std::string train = readFile(model + "/train.log"), valid = readFile(model + "/valid.log");
  EXPECT_NE(train.find("[batching] Done: "), std::string::npos) << train;
  EXPECT_NE(train.find("Ep. 1 : Up. 2 : "), std::string::npos) << train;
  EXPECT_NE(valid.find("Up. 2 : translation : "), std::string::npos) << valid;
  EXPECT_NE(valid.find("Up. 2 : ce-mean-words : "), std::string::npos) << valid;
  EXPECT_EQ(count(readFile(model + "/test_2016_flickr.en.output"), "\n"), 20);
  EXPECT_NE(readFile(d + "/mex.out").find("BLEU = "), std::string::npos) << readFile(d + "/mex.out");
}

}  // namespace
