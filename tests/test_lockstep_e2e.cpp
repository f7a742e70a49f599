// `mpirun marian --sync-sgd` end to end: what the ranks in lockstep agree on before each update
// (with --local-steps, once a round).
// They stay in lockstep at the end of an epoch whose batches do not divide among them, held in
// memory or streamed (where each rank cuts its own part), and count every rank's sentences and
// labels, so that a schedule in labels is the job's on every rank.
#include <algorithm>
#include <map>
#include <set>

#include "e2e_helpers.h"

namespace {

using e2e::mpirun;
using e2e::RunResult;

// A display line's fields: the job's sentences and labels (Sen., after), the rank's labels since
// its last line (* N) and the rate.
struct DisplayLine {
  int epoch;
  uint64_t sentences, labels, after;
  std::string lr, cost;
};

// e2e::run with --lr-report: the display lines end with the learning rate, as Marian's do with it
RunResult runShowingTheRate(const std::string& name, const std::string& extra, bool fresh, const std::string& launcher) {
  return e2e::run(name, extra + " --lr-report", fresh, launcher);
}

// Every rank's display lines: update -> rank -> its line.
std::map<int, std::map<int, DisplayLine>> displayLines(const std::string& log) {
  std::map<int, std::map<int, DisplayLine>> lines;
  std::regex line("\\] (\\[rank (\\d+)\\] )?Ep\\. (\\d+) : Up\\. (\\d+) : Sen\\. ([0-9,]+) : Cost ([0-9.]+) \\* ([0-9,]+) @ "
                  "[0-9,]+ after ([0-9,]+) : .* L\\.r\\. ([0-9.e+-]+)");
  auto number = [](std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
    return uint64_t(std::stoull(text));
  };
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
    const std::smatch& m = *it;
    lines[std::stoi(m[4])][m[2].matched ? std::stoi(m[2]) : 0] = {std::stoi(m[3]), number(m[5]), number(m[7]),
                                                                   number(m[8]), m[9], m[6]};
  }
  return lines;
}

TEST(SyncAllreduce, RanksStayInLockstepWhenAnEpochDoesNotDivide) {
  // 2,000 pairs in batches of 16: 125 batches, 2 left over on 3 ranks
  RunResult r = runShowingTheRate("sync-epochs", "--sync-sgd --after-epochs 2 --disp-freq 20", true, mpirun(3));
  ASSERT_EQ(r.status, 0) << r.log;
  // 41 updates per epoch on every rank
  EXPECT_NE(r.log.find("Ep. 2 : Up. 80 "), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("[rank 2] Ep. 2 : Up. 80 "), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Saved model"), std::string::npos) << r.log;
}

// Streamed, each rank cuts its own part of the epoch (chunks of a line dealt in turn, cut into
// batches window by window), so the ranks' batches differ in number: when one has no whole update
// left (--optimizer-delay 2: one batch is not enough), the epoch ends on all at the same update,
// learnt in the agreement every update makes, and the others' last batches are not trained.
TEST(SyncAllreduce, StreamedRanksEndEachEpochAtTheSameUpdate) {
  RunResult r = runShowingTheRate("sync-streamed-epochs",
                         "--sync-sgd --after-epochs 3 --disp-freq 1 --shuffle-window 100 --optimizer-delay 2", true,
                         mpirun(3));
  ASSERT_EQ(r.status, 0) << r.log;
  std::map<int, std::map<int, DisplayLine>> lines = displayLines(r.log);
  ASSERT_GE(lines.size(), 30u) << r.log;
  std::set<int> epochs;
  for(const auto& [update, ranks] : lines) {
    ASSERT_EQ(ranks.size(), 3u) << "update " << update << "\n" << r.log;
    for(const auto& [rank, l] : ranks)
      EXPECT_EQ(l.epoch, ranks.at(0).epoch) << "update " << update << ", rank " << rank;
    epochs.insert(ranks.at(0).epoch);
  }
  EXPECT_EQ(epochs, (std::set<int>{1, 2, 3})) << r.log;
  EXPECT_NE(r.log.find("mini-batch(es) not trained (a rank had no whole update left)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Saved model"), std::string::npos) << r.log;
}

// The ranks count every rank's sentences and labels, as Marian's synchronous training does: each
// display line's Sen. and "after" are the job's, the same on every rank, and so is a learning rate
// scheduled in labels (each rank counted its own before, and the ranks applied different rates to
// their copies of the parameters); --after, --valid-freq and --save-freq in labels act at the
// updates that take the job's count past them, on every rank (a save gathers from every rank).
TEST(SyncAllreduce, RanksCountEveryRanksLabelsAndShareTheirSchedule) {
  RunResult r = runShowingTheRate("sync-labels", "--sync-sgd --after 6000t --lr-warmup 20000t --disp-freq 1 --valid-freq 2000t "
                                        "--save-freq 3000t" + e2e::validation(),
                         true, mpirun(3));
  ASSERT_EQ(r.status, 0) << r.log;
  std::map<int, std::map<int, DisplayLine>> lines = displayLines(r.log);  // update -> rank -> its line
  ASSERT_GE(lines.size(), 10u) << r.log;
  uint64_t after = 0;
  for(const auto& [update, ranks] : lines) {
    SCOPED_TRACE("update " + std::to_string(update));
    ASSERT_EQ(ranks.size(), 3u);
    const DisplayLine& zero = ranks.at(0);
    for(const auto& [rank, l] : ranks) {
      after += l.labels;
      EXPECT_EQ(l.sentences, 3u * 16u * uint64_t(update)) << "rank " << rank;
      EXPECT_EQ(l.after, zero.after) << "rank " << rank;
      EXPECT_EQ(l.lr, zero.lr) << "rank " << rank;
    }
    EXPECT_EQ(zero.after, after);
    // the warm-up's rate at the job's labels, 0.003 min(1, after / 20000), to the 5 digits printed
    double lr = 0.003 * double(after) / 20000.0;
    EXPECT_NEAR(std::stod(zero.lr), lr, 1e-4 * lr);
  }
  EXPECT_GE(std::prev(lines.end())->second.at(0).after, 6000u);
  EXPECT_LT(std::prev(lines.end(), 2)->second.at(0).after, 6000u);
  // the first update past each multiple of the frequency validates (saves), and no other
  for(auto [every, done] : {std::pair<uint64_t, std::string>{2000, "\\[valid\\] Ep\\. \\d+ : Up\\. (\\d+) : cross-entropy"},
                            {3000, "Saved model to .*model\\.npz \\(update (\\d+)\\)"}}) {
    std::set<int> expected, seen;
    uint64_t before = 0;
    for(const auto& [update, ranks] : lines) {
      if(before / every != ranks.at(0).after / every)
        expected.insert(update);
      before = ranks.at(0).after;
    }
    expected.insert(std::prev(lines.end())->first);  // and the end
    std::regex mark(done);
    for(std::sregex_iterator it(r.log.begin(), r.log.end(), mark), end; it != end; ++it)
      seen.insert(std::stoi((*it)[1]));
    EXPECT_EQ(seen, expected) << "every " << every << " labels\n" << r.log;
  }
}

// With --local-steps the ranks meet once a round (at its end, and after an epoch's last update
// in memory), not before every update: the job's counts on the display lines (Sen. and "after")
// move only there, to every rank's labels up to there, the same on every rank, and so do a rate
// and validations scheduled in labels. Streamed, a rank whose epoch runs out mid-round idles to
// the round's end; the epoch ends there on all. In memory (125 batches: 41 updates an epoch on 3
// ranks) every rank's epoch ends after the same update, mid-round.
TEST(SyncAllreduce, LocalStepsAgreeOnceARound) {
  const int kRound = 5;
  for(bool streamed : {true, false}) {
    SCOPED_TRACE(streamed ? "streamed" : "in memory");
    RunResult r = runShowingTheRate("local-steps-epochs",
                           "--sync-sgd --local-steps 5 --after-epochs 3 --disp-freq 1 --lr-warmup 20000t " +
                               std::string(streamed ? "--shuffle-window 100 --optimizer-delay 2"
                                                    : "--valid-freq 3000t" + e2e::validation()),
                           true, mpirun(3));
    ASSERT_EQ(r.status, 0) << r.log;
    std::map<int, std::map<int, DisplayLine>> lines = displayLines(r.log);  // update -> rank -> its line
    ASSERT_GE(lines.size(), 30u) << r.log;
    ASSERT_EQ(lines.begin()->first, 1) << r.log;
    uint64_t trained = 0, agreed = 0;  // every rank's labels: all, and up to the last meeting
    std::set<int> epochs, validationsDue;
    for(auto it = lines.begin(); it != lines.end(); ++it) {
      const auto& [update, ranks] = *it;
      SCOPED_TRACE("update " + std::to_string(update));
      ASSERT_EQ(ranks.size(), 3u) << r.log;
      const DisplayLine& zero = ranks.at(0);
      for(const auto& [rank, l] : ranks) {
        trained += l.labels;
        EXPECT_EQ(l.epoch, zero.epoch) << "rank " << rank;
        EXPECT_EQ(l.sentences, zero.sentences) << "rank " << rank;
        EXPECT_EQ(l.after, zero.after) << "rank " << rank;
        EXPECT_EQ(l.lr, zero.lr) << "rank " << rank;
      }
      bool lastOfEpoch = std::next(it) == lines.end() || std::next(it)->second.at(0).epoch != zero.epoch;
      if(streamed && lastOfEpoch) {
        EXPECT_EQ(update % kRound, 0) << "a streamed epoch ends mid-round";
      }
      if(update % kRound == 0 || (!streamed && lastOfEpoch)) {  // met after it: what was trained up to here
        if(agreed / 3000 != trained / 3000)
          validationsDue.insert(update);
        agreed = trained;
      }
      EXPECT_EQ(zero.after, agreed);
      epochs.insert(zero.epoch);
      double lr = 0.003 * std::min(1.0, double(agreed) / 20000.0);  // the warm-up's rate at the job's labels
      EXPECT_NEAR(std::stod(zero.lr), lr, 1e-4 * lr + 1e-12);
    }
    EXPECT_EQ(epochs, (std::set<int>{1, 2, 3})) << r.log;
    EXPECT_GT(agreed, 0u);
    if(streamed) {
      EXPECT_NE(r.log.find("ran out on this rank at update"), std::string::npos) << r.log;
      EXPECT_NE(r.log.find("mini-batch(es) not trained (a rank had no whole update left)"), std::string::npos) << r.log;
    } else {  // at the updates whose meeting took the labels past a multiple of 3,000 (and the end)
      EXPECT_EQ(lines.size() % 41, 0u) << r.log;
      validationsDue.insert(std::prev(lines.end())->first);
      std::set<int> validated;
      std::regex mark("\\[valid\\] Ep\\. \\d+ : Up\\. (\\d+) : cross-entropy");
      for(std::sregex_iterator it(r.log.begin(), r.log.end(), mark), end; it != end; ++it)
        validated.insert(std::stoi((*it)[1]));
      EXPECT_EQ(validated, validationsDue) << r.log;
    }
    EXPECT_NE(r.log.find("Saved model"), std::string::npos) << r.log;
  }
}

// A run stopped where the ranks agreed that a streamed epoch is over (at the end of the round in
// which a rank ran out) resumes in the next epoch, as the run that went on did: the same Costs.
TEST(SyncAllreduce, LocalStepsResumeExactlyWhereAStreamedEpochEnded) {
  std::string options = "--sync-sgd --local-steps 5 --disp-freq 1 --shuffle-window 100 --optimizer-delay 2 "
                        "--after-epochs 2";
  RunResult whole = runShowingTheRate("local-steps-epoch-whole", options, true, mpirun(3));
  ASSERT_EQ(whole.status, 0) << whole.log;
  std::map<int, std::map<int, DisplayLine>> expected = displayLines(whole.log);
  int end = 0;  // epoch 1's last update
  for(const auto& [update, ranks] : expected)
    if(ranks.at(0).epoch == 1)
      end = update;
  ASSERT_GT(end, 0) << whole.log;
  RunResult first = runShowingTheRate("local-steps-epoch-resumed", options + " --after-batches " + std::to_string(end), true,
                             mpirun(3));
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = runShowingTheRate("local-steps-epoch-resumed", options, false, mpirun(3));
  ASSERT_EQ(second.status, 0) << second.log;
  EXPECT_NE(second.log.find("Resuming from"), std::string::npos) << second.log;
  std::map<int, std::map<int, DisplayLine>> got = displayLines(first.log), rest = displayLines(second.log);
  EXPECT_EQ(std::prev(got.end())->first, end);
  EXPECT_EQ(rest.begin()->first, end + 1);
  got.insert(rest.begin(), rest.end());
  ASSERT_EQ(got.size(), expected.size()) << "interrupted:\n" << first.log << second.log;
  for(const auto& [update, ranks] : expected)
    for(const auto& [rank, l] : ranks) {
      EXPECT_EQ(got[update][rank].epoch, l.epoch) << "update " << update << ", rank " << rank;
      EXPECT_EQ(got[update][rank].cost, l.cost) << "update " << update << ", rank " << rank;
    }
}

}  // namespace
