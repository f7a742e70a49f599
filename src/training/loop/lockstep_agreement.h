#pragma once
// defines: marian::LockstepAgreement — what ranks that update in lockstep agree on between
// updates, in one allreduce of a few numbers: the sentences and target labels they trained
// (every rank counts the job's, as Marian's synchronous training does, so that a schedule in
// labels, --lr-warmup 4000t or --after 2Mt, moves alike on every rank); whether any rank was sent
// the signal to stop; and whether any rank has run out of its epoch (a streamed corpus: each rank
// reads its own chunks, so one may run out before the others).
//
// Ranks that exchange gradients meet before every update, on that update's counts
// (--normalize-gradient divides by the job's labels). Ranks with --local-steps H exchange once a
// round, and a meeting every update would cost them a round trip of the network's latency each
// (on a wide-area link more than a GPU's update): they meet at each round's end (and after an
// epoch's last update in memory), on the updates since they last met. There a schedule in labels
// moves once a round, a signal stops training at the round's end, and a streamed epoch that runs
// out on one rank mid-round ends on all at the round's end, that rank idling until then.
#include <cstdint>
#include <vector>

#include "data/batch.h"

namespace marian {

class Transport;

class LockstepAgreement {
public:
  struct Counts {
    uint64_t sentences = 0, labels = 0;
  };
  struct Outcome {
    Counts job;               // every rank's (a rank alone: its own)
    bool signalled = false;   // some rank was sent the signal to stop
    bool epochEnded = false;  // some rank has no whole update left in the epoch
  };

  // transport: the job's ranks, or null; lockstep: whether they update in lockstep;
  // updatesPerMeeting: 1, or a round of local steps (GraphGroup::updatesPerAgreement).
  LockstepAgreement(Transport* transport, bool lockstep, uint64_t updatesPerMeeting);

  // Whether the ranks meet before every update (or this rank is alone): then beforeUpdate.
  bool everyUpdate() const { return !onceARound(); }
  bool onceARound() const { return lockstep_ && updatesPerMeeting_ > 1; }
  // The update after which the ranks meet next, `updatesDone` updates done.
  uint64_t nextMeetingAfter(uint64_t updatesDone) const {
    return (updatesDone / updatesPerMeeting_ + 1) * updatesPerMeeting_;
  }

  // Before every update: its group's counts (`delay` batches make a whole update), the job's in
  // lockstep. Collective in lockstep.
  Outcome beforeUpdate(const std::vector<Batch>& group, size_t delay, bool signalled) const;

  // Once a round: whether a round ends after `updatesDone` updates (the ranks meet there, and
  // after an epoch's last update in memory), and the meeting after `updatesDone` updates on the
  // updates since the last one (collective); trained() counts this rank's, ranOut() says its
  // epoch has no whole update left.
  bool meetsAfter(uint64_t updatesDone) const {
    return onceARound() && updatesDone > 0 && updatesDone % updatesPerMeeting_ == 0;
  }
  Outcome meet(uint64_t updatesDone, bool signalled);
  void trained(const std::vector<Batch>& group);
  void ranOut() { ranOut_ = true; }
  bool hasRunOut() const { return ranOut_; }

  // For a checkpoint after `updatesDone` updates: the job's counts that no meeting has agreed yet
  // (collective, unless the ranks met right there or never meet), and a resume's: given to rank
  // 0 to agree at the next meeting.
  Counts unagreed(uint64_t updatesDone) const;
  void resume(const Counts& unagreedByTheJob, int rank);

private:
  Outcome allreduce(const Counts& counts, bool signalled, bool ranOut, const char* what) const;

  Transport* transport_;
  bool lockstep_;
  uint64_t updatesPerMeeting_;
  Counts pending_;  // this rank's since the last meeting
  bool ranOut_ = false;
  uint64_t metAfter_ = uint64_t(-1);  // the updates done at the last meeting (none yet)
};

}  // namespace marian
