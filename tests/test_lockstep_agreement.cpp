// LockstepAgreement on ranks in this process: what ranks in lockstep agree on between updates.
// Ranks that exchange every update agree before each on its counts; ranks with local steps meet
// once a round on the counts since they last met, exactly past what one float sums exactly, with
// any rank's signal and any rank's running out; a checkpoint mid-round carries the job's counts
// not yet agreed into the resumed run's first meeting. (End to end, under mpirun:
// SyncAllreduce.LocalStepsAgreeOnceARound.)
#include <gtest/gtest.h>

#include <mutex>

#include "comm/in_process_transport.h"
#include "common/error.h"
#include "training/loop/lockstep_agreement.h"

namespace marian {
namespace {

Batch batchOf(int sentences, size_t labels) {
  Batch b;
  b.sentences = sentences;
  b.trgWords = labels;
  return b;
}

// Runs body(rank's agreement, rank) on `ranks` ranks in this process.
template <class Body>
void onRanks(int ranks, bool lockstep, uint64_t updatesPerMeeting, Body body) {
  InProcessNetwork network(ranks);
  network.run([&](Transport& t) {
    LockstepAgreement agreement(&t, lockstep, updatesPerMeeting);
    body(agreement, t.rank());
  });
}

TEST(LockstepAgreement, EveryUpdateSumsTheUpdatesCountsAndEndsTheEpochWhenARankHasNoWholeOne) {
  std::mutex m;
  std::vector<LockstepAgreement::Outcome> seen;
  onRanks(3, true, 1, [&](LockstepAgreement& a, int rank) {
    EXPECT_TRUE(a.everyUpdate());
    EXPECT_FALSE(a.meetsAfter(1));
    // delay 2: rank 2 has one batch only, rank 1 is signalled
    std::vector<Batch> group{batchOf(rank + 1, 10 * size_t(rank + 1))};
    if(rank != 2)
      group.push_back(batchOf(1, 5));
    LockstepAgreement::Outcome o = a.beforeUpdate(group, 2, rank == 1);
    std::lock_guard<std::mutex> lock(m);
    seen.push_back(o);
  });
  ASSERT_EQ(seen.size(), 3u);
  for(const LockstepAgreement::Outcome& o : seen) {
    EXPECT_EQ(o.job.sentences, 1u + 2u + 3u + 2u);
    EXPECT_EQ(o.job.labels, 10u + 20u + 30u + 10u);
    EXPECT_TRUE(o.signalled);
    EXPECT_TRUE(o.epochEnded);
  }
  // a rank alone counts its own
  LockstepAgreement alone(nullptr, false, 4);
  EXPECT_TRUE(alone.everyUpdate());
  LockstepAgreement::Outcome o = alone.beforeUpdate({batchOf(3, 40)}, 1, false);
  EXPECT_EQ(o.job.labels, 40u);
  EXPECT_FALSE(o.signalled || o.epochEnded);
}

TEST(LockstepAgreement, LocalStepsMeetOnceARoundOnTheRoundsCountsPastWhatAFloatSumsExactly) {
  const uint64_t kRound = 5;
  // 3 ranks with 4,000,001 labels an update each: 60,000,015 a round, past 2^24 (and odd, so a
  // float would round it)
  const size_t kLabels = 4000001;
  std::mutex m;
  std::vector<std::vector<LockstepAgreement::Outcome>> meetings(3);
  std::vector<LockstepAgreement::Counts> unagreed(3);
  onRanks(3, true, kRound, [&](LockstepAgreement& a, int rank) {
    EXPECT_TRUE(a.onceARound());
    EXPECT_FALSE(a.meetsAfter(0));
    std::vector<LockstepAgreement::Outcome> mine;
    for(uint64_t done = 1; done <= 2 * kRound + 2; ++done) {  // after update `done`
      if(rank == 2 && done == kRound + 4)  // it runs out in the second round, then idles
        a.ranOut();
      if(!a.hasRunOut())
        a.trained({batchOf(rank + 1, kLabels)});
      EXPECT_EQ(a.meetsAfter(done), done % kRound == 0) << done;
      if(a.meetsAfter(done))  // rank 1 signalled in the second round
        mine.push_back(a.meet(done, rank == 1 && done == 2 * kRound));
    }
    LockstepAgreement::Counts left = a.unagreed(2 * kRound + 2);  // 2 updates into the third round
    std::lock_guard<std::mutex> lock(m);
    meetings[size_t(rank)] = mine;
    unagreed[size_t(rank)] = left;
  });
  for(int rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& met = meetings[size_t(rank)];
    ASSERT_EQ(met.size(), 2u);
    // the first round: every rank's 5 updates
    EXPECT_EQ(met[0].job.sentences, kRound * (1 + 2 + 3));
    EXPECT_EQ(met[0].job.labels, kRound * 3 * kLabels);
    EXPECT_FALSE(met[0].signalled || met[0].epochEnded);
    // the second: rank 2 trained 3 updates, then ran out (it says so until they meet); rank 1's signal
    EXPECT_EQ(met[1].job.sentences, kRound * (1 + 2) + 3 * 3);
    EXPECT_EQ(met[1].job.labels, (2 * kRound + 3) * kLabels);
    EXPECT_TRUE(met[1].signalled);
    EXPECT_TRUE(met[1].epochEnded);
    // what a checkpoint now holds: 2 updates of every rank (rank 2's in the next epoch)
    EXPECT_EQ(unagreed[size_t(rank)].sentences, 2u * (1 + 2 + 3));
    EXPECT_EQ(unagreed[size_t(rank)].labels, 2u * 3 * kLabels);
  }
}

TEST(LockstepAgreement, AResumeMidRoundAgreesTheCheckpointsCountsOnceAtTheNextMeeting) {
  std::mutex m;
  std::vector<LockstepAgreement::Counts> unagreed(2), met(2), afterMeeting(2), next(2);
  onRanks(2, true, 4, [&](LockstepAgreement& a, int rank) {
    a.resume({7, 300}, rank);  // every rank is given them; only rank 0 keeps them
    a.trained({batchOf(1, 10)});
    // a checkpoint after 8 updates (a round's end) before any meeting: they are not agreed yet
    LockstepAgreement::Counts saved = a.unagreed(8);
    LockstepAgreement::Counts first = a.meet(8, false).job;
    LockstepAgreement::Counts none = a.unagreed(8), second = a.meet(12, false).job;
    std::lock_guard<std::mutex> lock(m);
    unagreed[size_t(rank)] = saved;
    met[size_t(rank)] = first;
    afterMeeting[size_t(rank)] = none;
    next[size_t(rank)] = second;
  });
  for(int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(unagreed[size_t(rank)].labels, 300u + 20u);
    EXPECT_EQ(afterMeeting[size_t(rank)].labels, 0u);
    EXPECT_EQ(met[size_t(rank)].sentences, 7u + 2u);
    EXPECT_EQ(met[size_t(rank)].labels, 300u + 20u);
    EXPECT_EQ(next[size_t(rank)].labels, 0u);
  }
}

TEST(LockstepAgreement, ARankAloneOrNotInLockstepNeverMeets) {
  LockstepAgreement alone(nullptr, true, 8);
  EXPECT_FALSE(alone.onceARound());
  EXPECT_FALSE(alone.meetsAfter(8));
  EXPECT_EQ(alone.unagreed(3).labels, 0u);
  onRanks(2, /*lockstep=*/false, 8, [&](LockstepAgreement& a, int) {
    EXPECT_FALSE(a.onceARound());
    EXPECT_THROW(a.meet(8, false), Error);
  });
}

}  // namespace
}  // namespace marian
