// Checkpoints end to end: a run stopped at update 10 and resumed to 20 prints the Costs of the
// uninterrupted run in every mode that is deterministic (the singleton, sync-SGD over devices,
// sync-SGD across 2 ranks dense and compressed with its residuals, local steps on 2 and 3 ranks
// stopped mid-round, the parameter server on one rank with and without dropping); the parameter
// server on 2 ranks saves every shard's optimizer
// state, moving average, residuals and records and goes on from them; a checkpoint of one layout
// resumes on another (2 ranks on 1 and 3, 2 devices on 1) and goes on training. (That re-sharding
// and restoring keep every value: test_graph_groups_in_process; a run resumed at its end saves
// nothing.)
#include <filesystem>
#include <tuple>
#include <map>
#include <set>
#include <sstream>
#include <regex>

#include "e2e_helpers.h"

namespace {

using e2e::costs;
using e2e::mpirun;
using e2e::RunResult;

// Adam, dropout, a moving average and a mid-epoch stop all have to survive the restart.
const std::string kCommon = " --transformer-dropout 0.1 --exponential-smoothing 0.01 ";

struct Mode {
  std::string name, options;
  int ranks;  // 0: no mpirun
};

std::string launcher(int ranks) { return ranks ? mpirun(ranks) : ""; }

void expectResumeIsExact(const Mode& m) {
  SCOPED_TRACE(m.name);
  RunResult whole = e2e::run("whole", kCommon + m.options + " --after-batches 20", true, launcher(m.ranks));
  ASSERT_EQ(whole.status, 0) << whole.log;
  RunResult first = e2e::run("resumed", kCommon + m.options + " --after-batches 10", true, launcher(m.ranks));
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = e2e::run("resumed", kCommon + m.options + " --after-batches 20", false, launcher(m.ranks));
  ASSERT_EQ(second.status, 0) << second.log;
  EXPECT_NE(second.log.find("Resuming from"), std::string::npos) << second.log;
  auto expected = costs(whole.log), got = costs(first.log), rest = costs(second.log);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(expected.size(), 4u) << whole.log;
  EXPECT_EQ(got, expected) << "interrupted:\n" << first.log << second.log << "\nuninterrupted:\n" << whole.log;
  // Marian's gNorm goes on from the checkpoint's (0 for the parameter server's updates, as Marian's async)
  auto norms = e2e::gradientNorms(first.log + second.log), expectedNorms = e2e::gradientNorms(whole.log);
  ASSERT_EQ(expectedNorms.size(), 4u) << whole.log;
  EXPECT_TRUE(expectedNorms[0] != "0.0000" || m.options.find("--multi-node") != std::string::npos);
  EXPECT_EQ(norms, expectedNorms);
}

TEST(Resume, SingletonAndSyncDevicesContinueExactly) {
  expectResumeIsExact({"singleton", "", 0});
  expectResumeIsExact({"sync over 2 devices", "--cpu-threads 2 --sync-sgd", 0});
}

TEST(Resume, SyncAcrossRanksContinuesExactlyDenseAndCompressed) {
  expectResumeIsExact({"2 ranks dense", "--sync-sgd", 2});
  // the residuals, the selectors' call counts and reused thresholds come back
  // saves at 5, 10, 15 and 20 on every rank; the last one coincides with the end of the run
  expectResumeIsExact({"2 ranks topka 0.05 sampled",
                       "--sync-sgd --sparse-allreduce topka --compression-density 0.05 --save-freq 5", 2});
  expectResumeIsExact({"2 ranks gtopk 0.05 reuse",
                       "--sync-sgd --sparse-allreduce gtopk --compression-density 0.05 --topk-selection reuse "
                       "--topk-reuse-every 3",
                       2});
  // PowerSGD's residuals and shared warm-start Q come back (dense for its first 3 updates)
  expectResumeIsExact({"2 ranks powersgd rank 2",
                       "--sync-sgd --sparse-allreduce ring --powersgd-rank 2 --powersgd-start 3", 2});
  // 1-bit Adam's worker and server errors, the frozen variance's step count
  expectResumeIsExact({"2 ranks 1-bit Adam", "--sync-sgd --sparse-allreduce ring --onebit-adam "
                       "--adam-freeze-variance-after 3", 2});
  // 0/1 Adam: resumed at 5 in its 1-bit gradient phase (variance steps 1, 3, 7), at 10 and 15 in
  // its momentum phase
  expectResumeIsExact({"2 ranks 0/1 Adam", "--sync-sgd --sparse-allreduce ring --zero-one-adam "
                       "--adam-freeze-variance-after 8 --adam-variance-update-scaler 1", 2});
}

// A streamed corpus (windows of 100 pairs of the 2,000: the stop at update 10 falls in a later
// window than the first) resumes at its window without encoding what came before.
TEST(Resume, StreamedCorpusContinuesExactly) {
  expectResumeIsExact({"streamed singleton", "--shuffle-window 100", 0});
  expectResumeIsExact({"streamed 2 ranks sync", "--sync-sgd --shuffle-window 100", 2});
  expectResumeIsExact({"streamed 2 devices sync, 2 batches an update", "--sync-sgd --cpu-threads 2 --optimizer-delay 2 "
                       "--shuffle-window 100 --shuffle batches", 0});
  expectResumeIsExact({"streamed PS 1 rank", "--multi-node --shuffle-window 100", 1});
}

// A position that this run cannot find in the corpus as it reads it (streamed in chunks of
// another size: another --shuffle-window; or streamed against held in memory) starts the epoch
// again, says so and trains all of it: it went on at a place of another dealing of the chunks,
// leaving pairs untrained.
TEST(Resume, AnotherWayOfReadingTheCorpusStartsTheEpochAgain) {
  struct Case {
    std::string before, after, says;
  };
  for(const Case& c : {Case{"--shuffle-window 1000", "--shuffle-window 1400",
                            "saved with the corpus read in chunks of 5 lines (this run's: 7"},
                       Case{"--shuffle-window 1000", "--shuffle-in-ram", "saved with the corpus streamed; in memory"},
                       Case{"", "--shuffle-window 1000", "saved with the corpus held in memory: the epoch starts again"}}) {
    SCOPED_TRACE(c.before + " -> " + c.after);
    RunResult first = e2e::run("reread", c.before + " --after-batches 60", true);
    ASSERT_EQ(first.status, 0) << first.log;
    RunResult second = e2e::run("reread", c.after + " --after-epochs 1 --disp-freq 100", false);
    ASSERT_EQ(second.status, 0) << second.log;
    EXPECT_NE(second.log.find(c.says), std::string::npos) << second.log;
    EXPECT_NE(second.log.find("Seen 2,000 samples"), std::string::npos) << second.log;
  }
}

TEST(Resume, ParameterServerOnOneRankContinuesExactly) {
  expectResumeIsExact({"PS 1 rank dense", "--multi-node", 1});
  // the client's residual and the server's record of what it sent the client come back
  expectResumeIsExact({"PS 1 rank dropping", "--multi-node --grad-dropping-rate 0.9 --grad-dropping-warmup 4", 1});
}

// Two ranks train asynchronously, so their Costs depend on timing: the checkpoint holds every
// shard's and client's state (the values come back: GraphGroupsInProcess.Resharding...) and the
// run resumes from it and trains on.
TEST(Resume, ParameterServerOnTwoRanksSavesEveryShardsStateAndGoesOn) {
  std::string opts = kCommon + "--multi-node --grad-dropping-rate 0.9 --grad-dropping-warmup 4 --optimizer adam ";
  RunResult first = e2e::run("ps2", opts + "--after-batches 12", true, mpirun(2));
  ASSERT_EQ(first.status, 0) << first.log;
  std::string saved = e2e::readFile(e2e::corpusDir() + "/ps2/model.npz.optimizer.npz");
  for(const char* name : {"adam_mt", "adam_vt", "smoothed_parameters", "extra:dropping-residual.client1",
                          "extra:server-view.client1", "server-version.shard1"})
    EXPECT_NE(saved.find(name), std::string::npos) << name;
  RunResult again = e2e::run("ps2", opts + "--after-batches 20", false, mpirun(2));
  ASSERT_EQ(again.status, 0) << again.log;
  EXPECT_NE(again.log.find("Resuming from"), std::string::npos) << again.log;
  auto resumed = costs(again.log);
  ASSERT_EQ(resumed.size(), 2u) << again.log;  // updates 15 and 20
  EXPECT_EQ(resumed.back().first, 20) << again.log;
}

// First Cost after the resume below the fresh run's first Cost: the model went on, not over.
void expectResumesOn(const std::string& name, const std::string& opts, int ranksBefore, const std::string& before,
                     int ranksAfter, const std::string& after, const std::string& message) {
  SCOPED_TRACE(name);
  RunResult first = e2e::run(name, opts + before + " --after-batches 30", true, launcher(ranksBefore));
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = e2e::run(name, opts + after + " --after-batches 50", false, launcher(ranksAfter));
  ASSERT_EQ(second.status, 0) << second.log;
  EXPECT_NE(second.log.find(message), std::string::npos) << second.log;
  auto start = costs(first.log), resumed = costs(second.log);
  ASSERT_FALSE(start.empty());
  ASSERT_FALSE(resumed.empty()) << second.log;
  EXPECT_EQ(resumed.back().first, 50) << second.log;
  EXPECT_LT(std::stod(resumed.front().second), std::stod(start.front().second)) << first.log << second.log;
}

TEST(Resume, ACheckpointResumesOnAnotherNumberOfRanksOrDevices) {
  std::string ps = kCommon + "--multi-node --grad-dropping-rate 0.9 --grad-dropping-warmup 4 ";
  expectResumesOn("ps-2-to-1", ps, 2, "", 1, "", "re-sharded");
  expectResumesOn("ps-2-to-3", ps, 2, "", 3, "", "re-sharded");
  std::string sync = kCommon + "--sync-sgd --sparse-allreduce topka --compression-density 0.05 ";
  expectResumesOn("sync-2-to-1", sync, 2, "", 1, "", "summed into rank 0");
  expectResumesOn("sync-2-to-3", sync, 2, "", 3, "", "summed into rank 0");
  expectResumesOn("devices-2-to-1", kCommon + "--sync-sgd ", 0, "--cpu-threads 2", 0, "--cpu-threads 1",
                  "saved on 1 rank(s) x 2 device(s)");
  // streamed: the epoch goes on after the chunks the saved ranks had started
  expectResumesOn("streamed-2-to-1", kCommon + "--sync-sgd --shuffle-window 100 ", 2, "", 1, "",
                  "The checkpoint was saved on 2 rank(s) with windows of 50 chunks, this run has 1 with 100");
}

// A checkpoint of 2 ranks resumed on 3 in mid-epoch: 31 updates took batches 0-61 of the epoch's
// 125, so the 3 ranks take whole rounds of 3 from batch 62 (21 updates each), and all end the
// epoch at the same update (counted from the epoch's start, rounds left one rank a batch short:
// it began the next epoch an update early, and the ranks' collectives no longer paired up).
TEST(Resume, OnMoreRanksInMidEpochEveryRankEndsTheEpochAtTheSameUpdate) {
  std::string sync = kCommon + "--sync-sgd --disp-freq 1 ";
  RunResult first = e2e::run("sync-31-on-3", sync + "--after-batches 31", true, mpirun(2));
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = e2e::run("sync-31-on-3", sync + "--after-batches 60", false, mpirun(3));
  ASSERT_EQ(second.status, 0) << second.log;
  std::map<int, std::set<std::string>> epochs;  // update -> the epochs the ranks' lines show
  std::regex line("\\] (\\[rank \\d\\] )?Ep\\. (\\d+) : Up\\. (\\d+) : ");
  for(std::sregex_iterator it(second.log.begin(), second.log.end(), line), end; it != end; ++it)
    epochs[std::stoi((*it)[3])].insert((*it)[2]);
  ASSERT_EQ(epochs.size(), 29u) << second.log;  // updates 32-60, each on every rank
  for(const auto& [update, seen] : epochs)
    EXPECT_EQ(seen.size(), 1u) << "update " << update << ": the ranks are in different epochs\n" << second.log;
  EXPECT_EQ(*epochs.at(52).begin(), "1") << second.log;  // 31 + 21 updates: the epoch's last
  EXPECT_EQ(*epochs.at(53).begin(), "2") << second.log;
}

// A resume with another --mini-batch: the saved 10 batches of 16 would be 320 sentences of 32s;
// the epoch goes on after the 160 trained, and says so.
TEST(Resume, AnotherMiniBatchGoesOnAfterTheSentencesTrained) {
  RunResult first = e2e::run("rebatched", " --after-batches 10 --save-freq 10", true);
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = e2e::run("rebatched", " --mini-batch 32 --after-batches 15 --save-freq 10", false);
  ASSERT_EQ(second.status, 0) << second.log;
  EXPECT_NE(second.log.find("Epoch 1 was cut into batches with '--mini-batch 16' when saved, '--mini-batch 32' now: "
                            "it goes on after 160 sentences (5 of its"),
            std::string::npos)
      << second.log;
  EXPECT_NE(second.log.find("Up. 15 : Sen. 320 :"), std::string::npos) << second.log;
}

// [valid] lines from "Up." on (the time stamp and epoch dropped)
std::vector<std::string> validations(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream lines(log);
  for(std::string l; std::getline(lines, l);)
    if(l.find("[valid]") != std::string::npos && l.find("Up. ") != std::string::npos)
      out.push_back(l.substr(l.find("Up. ")));
  return out;
}

// A checkpoint saved at an epoch's end, after its validation: the resumed run goes on with the
// next epoch, neither validating those parameters again (a stall counted twice, which stopped
// training at --early-stopping 1) nor saving them again; and a finished run started again
// changes nothing.
TEST(Resume, AtAnEpochsEndTheNextEpochStartsWithoutValidatingAgain) {
  std::string opts = e2e::validation() + " --mini-batch 100 --valid-freq 1e --save-freq 1e --disp-freq 20 "
                     "--valid-metrics cross-entropy --early-stopping 1 ";
  RunResult whole = e2e::run("epoch-end-whole", opts + "--after-epochs 3", true);
  ASSERT_EQ(whole.status, 0) << whole.log;
  RunResult first = e2e::run("epoch-end", opts + "--after-epochs 1", true);
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult again = e2e::run("epoch-end", opts + "--after-epochs 1", false);
  ASSERT_EQ(again.status, 0) << again.log;
  EXPECT_TRUE(validations(again.log).empty()) << again.log;
  EXPECT_EQ(again.log.find("Saved"), std::string::npos) << again.log;
  EXPECT_NE(again.log.find("nothing to do"), std::string::npos) << again.log;
  RunResult second = e2e::run("epoch-end", opts + "--after-epochs 3", false);
  ASSERT_EQ(second.status, 0) << second.log;
  std::vector<std::string> got = validations(first.log), rest = validations(second.log);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(validations(whole.log).size(), 3u) << whole.log;
  EXPECT_EQ(got, validations(whole.log)) << first.log << second.log << "\nuninterrupted:\n" << whole.log;
  EXPECT_EQ(costs(first.log).size() + costs(second.log).size(), costs(whole.log).size()) << second.log;
}

// A run whose progress file is ahead of or behind the checkpoint (a save killed between the two
// renames) resumes from the checkpoint and says so; a progress file without a checkpoint is an
// error that names both; stale temporary files of a killed save are removed.
TEST(Resume, InterruptedSavesAreDetectedAndCleanedUp) {
  RunResult first = e2e::run("interrupted", kCommon + "--after-batches 10");
  ASSERT_EQ(first.status, 0) << first.log;
  std::string folder = e2e::corpusDir() + "/interrupted/";
  std::string progress = e2e::readFile(folder + "model.npz.progress.yml");
  std::string ahead = std::regex_replace(progress, std::regex("batches: 10"), "batches: 15");
  { std::ofstream(folder + "model.npz.progress.yml") << ahead; }
  // whatever a killed save was writing: the model, the checkpoint, an iteration model and its
  // checkpoint; another model's file in the same folder is not this run's to remove
  const std::vector<std::string> stale = {"model.npz.optimizer.npz.tmp.999999999", "model.npz.tmp.999999999",
                                          "model.iter456.npz.tmp.999999999",
                                          "model.iter456.npz.optimizer.npz.tmp.999999999",
                                          "model.iter456.npz.progress.yml.tmp.999999999",
                                          "model.npz.best-cross-entropy.npz.tmp.999999999"};
  for(const std::string& f : stale)
    std::ofstream(folder + f) << "partial";
  { std::ofstream(folder + "other.npz.tmp.999999999") << "another model's"; }
  RunResult second = e2e::run("interrupted", kCommon + "--after-batches 12", false);
  ASSERT_EQ(second.status, 0) << second.log;
  EXPECT_NE(second.log.find("a save was interrupted"), std::string::npos) << second.log;
  EXPECT_NE(second.log.find("update 10"), std::string::npos) << second.log;
  for(const std::string& f : stale)
    EXPECT_FALSE(std::filesystem::exists(folder + f)) << f;
  EXPECT_TRUE(std::filesystem::exists(folder + "other.npz.tmp.999999999"));

  std::filesystem::remove(folder + "model.npz.optimizer.npz");
  RunResult third = e2e::run("interrupted", kCommon + "--after-batches 14", false);
  EXPECT_NE(third.status, 0);
  EXPECT_NE(third.log.find("checkpoint"), std::string::npos) << third.log;
  EXPECT_NE(third.log.find("model.npz.optimizer.npz"), std::string::npos) << third.log;
}

// A checkpoint records the corpus and the vocabularies it was trained on (lines, and each file's
// bytes and CRC-32): a resume on other vocabularies, or in mid-epoch on another corpus, is an error
// that names both and the way out and leaves the checkpoint as it was; with --no-restore-corpus
// the new corpus trains from its first sentence; the same text in another file (a copy, gzipped)
// resumes. A streamed corpus too.
TEST(Resume, AnotherCorpusOrVocabularyIsNamed) {
  std::string d = e2e::corpusDir(), m = d + "/other-data/";
  RunResult first = e2e::run("other-data", "--after-batches 10");
  ASSERT_EQ(first.status, 0) << first.log;
  ASSERT_EQ(std::system(("gzip -c " + d + "/train.src > " + m + "same.src.gz && cp " + d + "/train.trg " + m +
                         "same.trg && head -n 1900 " + d + "/train.src > " + m + "short.src && head -n 1900 " + d +
                         "/train.trg > " + m + "short.trg")
                            .c_str()),
            0);
  RunResult copied = e2e::run("other-data", "--train-sets " + m + "same.src.gz " + m + "same.trg --after-batches 12", false);
  ASSERT_EQ(copied.status, 0) << copied.log;
  EXPECT_NE(copied.log.find("Resuming from"), std::string::npos) << copied.log;

  std::string checkpoint = e2e::readFile(m + "model.npz.optimizer.npz"), progress = e2e::readFile(m + "model.npz.progress.yml");
  EXPECT_NE(progress.find("corpus: 2,000 lines; source "), std::string::npos) << progress;
  RunResult shorter = e2e::run("other-data", "--train-sets " + m + "short.src " + m + "short.trg --after-batches 14", false);
  EXPECT_NE(shorter.status, 0);
  for(std::string part : {"stands 12 updates into epoch 1 of another corpus than --train-sets gives (then: 2,000 lines; "
                          "source ", "now: 1,900 lines; source ", "resume with --no-restore-corpus"})
    EXPECT_NE(shorter.log.find(part), std::string::npos) << part << "\n" << shorter.log;

  // two words of the vocabulary swapped (the same size): the embeddings' rows would mean other words
  std::istringstream entries(e2e::readFile(d + "/vocab.src.yml"));
  std::vector<std::string> lines;
  for(std::string line; std::getline(entries, line);)
    lines.push_back(line);
  ASSERT_GT(lines.size(), 4u);
  std::string word2 = lines[2].substr(0, lines[2].find(':')), word3 = lines[3].substr(0, lines[3].find(':'));
  lines[2] = word3 + lines[2].substr(word2.size());
  lines[3] = word2 + lines[3].substr(word3.size());
  {
    std::ofstream swapped(m + "swapped.yml");
    for(const std::string& line : lines)
      swapped << line << "\n";
  }
  RunResult revocab = e2e::run("other-data", "--vocabs " + m + "swapped.yml " + d + "/vocab.trg.yml --after-batches 14", false);
  EXPECT_NE(revocab.status, 0);
  EXPECT_NE(revocab.log.find("was trained with other vocabularies than --vocabs gives (then: source "),
            std::string::npos) << revocab.log;
  EXPECT_TRUE(e2e::readFile(m + "model.npz.optimizer.npz") == checkpoint) << "the refused runs changed the checkpoint";
  EXPECT_EQ(e2e::readFile(m + "model.npz.progress.yml"), progress);

  RunResult restarted = e2e::run(
      "other-data", "--train-sets " + m + "short.src " + m + "short.trg --no-restore-corpus --after-batches 14", false);
  ASSERT_EQ(restarted.status, 0) << restarted.log;
  EXPECT_NE(restarted.log.find("epoch 1 starts again from the first sentence"), std::string::npos) << restarted.log;
  EXPECT_NE(e2e::readFile(m + "model.npz.progress.yml").find("corpus: 1,900 lines; source "), std::string::npos);

  RunResult streamed = e2e::run("other-data-streamed", "--shuffle-window 100 --after-batches 4");
  ASSERT_EQ(streamed.status, 0) << streamed.log;
  RunResult streamedShorter = e2e::run(
      "other-data-streamed", "--shuffle-window 100 --train-sets " + m + "short.src " + m + "short.trg --after-batches 6",
      false);
  EXPECT_NE(streamedShorter.status, 0);
  EXPECT_NE(streamedShorter.log.find("stands 4 updates into epoch 1 of another corpus"), std::string::npos)
      << streamedShorter.log;
}

// 1-bit Adam keeps momentum errors where the other compressed exchanges keep gradient residuals
// (the same checkpoint arrays): resumed on the other kind of scheme, they start at zero and the
// log says so, instead of being read in the wrong units.
TEST(Resume, AnotherSchemesResidualsAreNotReadInTheWrongUnits) {
  std::string onebit = "--sync-sgd --sparse-allreduce ring --onebit-adam --adam-freeze-variance-after 4 ",
              topk = "--sync-sgd --sparse-allreduce topka --compression-density 0.05 ";
  RunResult first = e2e::run("other-scheme", onebit + "--after-batches 10", true, mpirun(2));
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult toTopk = e2e::run("other-scheme", topk + "--after-batches 15", false, mpirun(2));
  ASSERT_EQ(toTopk.status, 0) << toTopk.log;
  EXPECT_NE(toTopk.log.find("The checkpoint's allreduce residuals are 1-bit Adam's momentum errors, not gradient "
                            "residuals: the top-k residuals start at zero"),
            std::string::npos) << toTopk.log;
  RunResult back = e2e::run("other-scheme", onebit + "--after-batches 20", false, mpirun(2));
  ASSERT_EQ(back.status, 0) << back.log;
  EXPECT_NE(back.log.find("The checkpoint's allreduce residuals are gradient residuals, not 1-bit Adam's momentum "
                          "errors: 1-bit Adam's errors start at zero"),
            std::string::npos) << back.log;
  RunResult same = e2e::run("other-scheme", onebit + "--after-batches 25", false, mpirun(2));
  ASSERT_EQ(same.status, 0) << same.log;
  EXPECT_EQ(same.log.find("start at zero"), std::string::npos) << same.log;
}

// A checkpoint resumes on the gradient it was trained on: with --normalize-gradient only if it was
// trained with it (Adam's moments are in its units), an error naming the option otherwise.
TEST(Resume, TheGradientsNormalisationMustMatchTheCheckpoints) {
  RunResult first = e2e::run("resume-normalized", "--after-batches 4 --normalize-gradient");
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult summed = e2e::run("resume-normalized", "--after-batches 6", false);
  EXPECT_NE(summed.status, 0);
  EXPECT_NE(summed.log.find("was trained on the per-label gradient and this run would back-propagate the summed one"),
            std::string::npos) << summed.log;
  EXPECT_NE(summed.log.find("resume with --normalize-gradient"), std::string::npos) << summed.log;
  RunResult normalized = e2e::run("resume-normalized", "--after-batches 6 --normalize-gradient", false);
  ASSERT_EQ(normalized.status, 0) << normalized.log;
  EXPECT_NE(normalized.log.find("Resuming from"), std::string::npos) << normalized.log;
}

// --sigterm save-and-exit (Marian's default): the update in flight finishes, the run saves and
// stops, and a restart continues from there.
TEST(Resume, SigtermSavesAndExits) {
  std::string m = e2e::corpusDir() + "/sigterm";
  std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian " + e2e::tinyModelOptions(m) + kCommon +
                    "--after-batches 100000 --disp-freq 1 > " + m + "/log.txt 2>&1 & pid=$!; "
                    "for i in $(seq 600); do grep -q 'Up. 3 ' " + m + "/log.txt 2>/dev/null && break; sleep 0.05; done; "
                    "kill -TERM $pid; wait $pid";
  { std::ofstream(m + "/run.sh") << cmd << "\n"; }
  int status = std::system(("bash " + m + "/run.sh").c_str());
  std::string log = e2e::readFile(m + "/log.txt");
  EXPECT_EQ(status, 0) << log;
  EXPECT_NE(log.find("Training stops on SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("Saved model"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::exists(m + "/model.npz.optimizer.npz"));
}

// With sync-SGD under mpirun a SIGTERM that reaches one rank only (rank 1 here) stops every rank:
// the ranks agree on signals before each update, so all stop after the same one and rank 0
// saves (only rank 0's signal counted before: rank 1 went on training alone). With local steps
// they agree once a round: all stop at the round's end.
TEST(Resume, SigtermToOneRankStopsEveryRankAfterTheSameUpdate) {
  for(auto [name, options, round] : std::vector<std::tuple<std::string, std::string, int>>{
          {"sigterm-rank1", "--sync-sgd", 1}, {"sigterm-rank1-local-steps", "--sync-sgd --local-steps 4", 4}}) {
    SCOPED_TRACE(options);
    std::string m = e2e::corpusDir() + "/" + name;
    std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
    std::string log = m + "/log.txt";
    std::string cmd = mpirun(2) + std::string(MARIAN_BIN_DIR) + "/marian " + e2e::tinyModelOptions(m) + kCommon +
                      options + " --after-batches 100000 --disp-freq 1 > " + log + " 2>&1 & job=$!; "
                      "for i in $(seq 600); do grep -q 'rank 1] Ep. 1 : Up. 3 ' " + log + " 2>/dev/null && break; "
                      "sleep 0.05; done; "
                      "pid=$(grep -o 'rank 1] \\[marian\\] Running on .* as process [0-9]*' " + log +
                      " | grep -o '[0-9]*$'); kill -TERM $pid; wait $job";
    { std::ofstream(m + "/run.sh") << cmd << "\n"; }
    int status = std::system(("bash " + m + "/run.sh").c_str());
    std::string text = e2e::readFile(log);
    EXPECT_EQ(status, 0) << text;
    std::smatch zero, one;
    ASSERT_TRUE(std::regex_search(text, zero, std::regex("\\d\\d\\] Training stops on SIGTERM .* at update (\\d+)")))
        << text;
    ASSERT_TRUE(std::regex_search(text, one, std::regex("\\[rank 1\\] Training stops on SIGTERM .* at update (\\d+)")))
        << text;
    EXPECT_EQ(zero[1], one[1]) << text;
    // the ranks meet at a round's end, and at an epoch's (where a late signal can land): the
    // epochs' last updates of the same run without a signal
    int stopped = std::stoi(zero[1]);
    if(stopped % round != 0) {
      std::string ref = m + "-epochs";
      std::system(("rm -rf " + ref + " && mkdir -p " + ref).c_str());
      std::system((mpirun(2) + std::string(MARIAN_BIN_DIR) + "/marian " + e2e::tinyModelOptions(ref) + kCommon + options +
                   " --after-epochs " + std::to_string(stopped / 20 + 2) + " --disp-freq 1 > " + ref + "/log.txt 2>&1")
                      .c_str());
      std::map<int, int> lastOfEpoch;  // epoch -> its last update (rank 0's lines)
      std::set<int> epochEnds;
      std::string refLog = e2e::readFile(ref + "/log.txt");
      const std::regex display("\\d\\d\\] Ep\\. (\\d+) : Up\\. (\\d+) :");
      for(auto it = std::sregex_iterator(refLog.begin(), refLog.end(), display); it != std::sregex_iterator(); ++it)
        lastOfEpoch[std::stoi((*it)[1])] = std::stoi((*it)[2]);
      for(auto [epoch, last] : lastOfEpoch)
        epochEnds.insert(last);
      EXPECT_TRUE(epochEnds.count(stopped)) << "stopped at update " << stopped << ", neither a round's end nor an epoch's\n"
                                            << text;
    }
    EXPECT_NE(text.find("Saved model to " + m + "/model.npz (update " + std::string(zero[1]) + ")"), std::string::npos)
        << text;
  }
}

}  // namespace

namespace {

// Compressed training with everything that makes it converge: local gradients (each rank's own
// copy, averaged every 3 updates), momentum correction's velocities, the density's warm-up and
// local clipping. Saves at 7 (and 10, 14) and validations every 4 updates read the ranks' mean
// without changing any copy, so the resumed run prints the uninterrupted run's Costs.
TEST(Resume, CompressedTrainingWithLocalGradientsContinuesExactly) {
  expectResumeIsExact({"2 ranks topka 0.05, local gradients, momentum, warm-up, local clipping",
                       "--sync-sgd --sparse-allreduce topka --compression-density 0.05 --local-gradients partial "
                       "--local-average-freq 3 --grad-dropping-momentum 0.9 --grad-dropping-warmup 6 "
                       "--compression-clip-norm 1 --save-freq 7 --valid-freq 4" + e2e::validation(),
                       2});
}

// Local steps (DiLoCo's outer step): the stop at update 10 falls in the middle of the third round
// of 4; every rank's parameters and Adam moments and the outer state come back, and the errors of
// a compressed outer exchange (4-bit codes on 2 ranks, signs and top-k pairs on 3, each chunk's
// top values in 2 bits with a decayed accumulator on 2; the signs with
// the inner Adam dividing by the variance of the ranks' mean). Streamed in 2
// fragments with a delay of 1, fragment 0 (sent after update 10, merged after 11) is in flight at
// the stop: its mean comes back and merges after the same update.
TEST(Resume, LocalStepsContinueExactlyMidRound) {
  for(auto [ranks, exchange] : std::vector<std::pair<int, std::string>>{
          {2, ""},
          {3, ""},
          {2, " --outer-quantize-bits 4"},
          {3, " --outer-quantize-bits 1 --local-adam-variance mean"},
          {3, " --outer-density 0.05"},
          {2, " --outer-density 0.05 --outer-quantize-bits 2 --outer-error-decay 0.9"},
          {2, " --outer-fragments 2 --outer-delay 1 --outer-quantize-bits 4"},
          {3, " --outer-fragments 2 --outer-delay 1"}})
    expectResumeIsExact({std::to_string(ranks) + " ranks, 4 local steps" + exchange,
                         "--sync-sgd --local-steps 4 --outer-momentum 0.5 --save-freq 7 --valid-freq 5 "
                         "--lr-warmup 3000t" + exchange +
                             e2e::validation(),
                         ranks});
}

// With local gradients the ranks' copies drift apart between averagings: the checkpoint keeps
// each rank's (values, moving average and Adam moments) and its own arrays (what model.npz
// exports) are their mean; averaged at every update the copies are identical (with
// --local-average-state parameters, the moments stay each rank's own).
TEST(Resume, LocalGradientsKeepEveryRanksCopyAndExportTheirMean) {
  for(auto [every, state] : std::vector<std::pair<int, std::string>>{{0, "all"}, {1, "all"}, {1, "parameters"}}) {
    SCOPED_TRACE("--local-average-freq " + std::to_string(every) + " --local-average-state " + state);
    std::string name = "local-copies-" + std::to_string(every) + state;
    RunResult r = e2e::run(name,
                           kCommon + "--sync-sgd --sparse-allreduce topka --compression-density 0.05 "
                                     "--local-gradients partial --after-batches 9 --local-average-freq " +
                               std::to_string(every) + " --local-average-state " + state,
                           true, mpirun(2));
    ASSERT_EQ(r.status, 0) << r.log;
    std::string folder = e2e::corpusDir() + "/" + name + "/";
    std::string check =
        "import numpy as np, sys\n"
        "c = np.load(sys.argv[1] + 'model.npz.optimizer.npz')\n"
        "every, state = int(sys.argv[2]), sys.argv[3]\n"
        "for a in ['values', 'smoothed', 'adam_mt', 'adam_vt']:\n"
        "    r0, r1 = c['extra:replica.rank0.' + a], c['extra:replica.rank1.' + a]\n"
        "    main = {'values': 'master_parameters', 'smoothed': 'smoothed_parameters'}.get(a, a)\n"
        "    assert np.allclose(c[main], (r0 + r1) / 2, rtol=1e-5, atol=1e-7), a + ': not the mean'\n"
        "    d = float(np.abs(r0 - r1).max())\n"
        "    same = every == 1 and (state == 'all' or not a.startswith('adam'))\n"
        "    assert (d == 0) if same else (d > 0), a + ': copies differ by %g' % d\n";
    { std::ofstream(folder + "check.py") << check; }
    int status = std::system(("/usr/bin/python3 " + folder + "check.py " + folder + " " + std::to_string(every) +
                              " " + state + " > " + folder + "check.txt 2>&1")
                                 .c_str());
    EXPECT_EQ(status, 0) << e2e::readFile(folder + "check.txt") << r.log;
  }
}

}  // namespace
