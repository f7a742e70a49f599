#include "training/loop/lockstep_agreement.h"

#include <algorithm>

#include "comm/transport.h"
#include "common/error.h"

namespace marian {

namespace {

// A count travels as digits of 12 bits, each summed exactly in a float over up to 4,096 ranks
// (4,095 x 4,096 < 2^24): a round of local steps on many ranks counts far more labels than one
// float holds exactly.
constexpr int kDigitBits = 12, kDigits = 3;
constexpr uint64_t kDigitBase = uint64_t(1) << kDigitBits;
constexpr uint64_t kCountLimit = uint64_t(1) << (kDigitBits * kDigits);
constexpr int kMostRanks = int(kDigitBase);

void putDigits(uint64_t count, float* digits) {
  for(int d = 0; d < kDigits; ++d, count >>= kDigitBits)
    digits[d] = float(count % kDigitBase);
}

uint64_t fromDigits(const float* digits) {
  uint64_t count = 0;
  for(int d = kDigits - 1; d >= 0; --d)
    count = count * kDigitBase + uint64_t(digits[d]);
  return count;
}

LockstepAgreement::Counts countsOf(const std::vector<Batch>& group) {
  LockstepAgreement::Counts c;
  for(const Batch& b : group) {
    c.sentences += uint64_t(b.sentences);
    c.labels += b.trgWords;
  }
  return c;
}

}  // namespace

LockstepAgreement::LockstepAgreement(Transport* transport, bool lockstep, uint64_t updatesPerMeeting)
    : transport_(transport), lockstep_(lockstep && transport && transport->size() > 1),
      updatesPerMeeting_(std::max<uint64_t>(updatesPerMeeting, 1)) {
  ABORT_IF(lockstep_ && transport_->size() > kMostRanks, "{} ranks in lockstep: they count their labels exactly up to {}",
           transport_->size(), kMostRanks);
}

LockstepAgreement::Outcome LockstepAgreement::allreduce(const Counts& counts, bool signalled, bool ranOut,
                                                        const char* what) const {
  ABORT_IF(counts.sentences >= kCountLimit || counts.labels >= kCountLimit,
           "{} sentences and {} labels between two agreements of the ranks are more than they count exactly ({}): "
           "lower --mini-batch or --local-steps",
           counts.sentences, counts.labels, kCountLimit);
  float agreed[2 * kDigits + 2];
  putDigits(counts.sentences, agreed);
  putDigits(counts.labels, agreed + kDigits);
  agreed[2 * kDigits] = signalled ? 1.f : 0.f;
  agreed[2 * kDigits + 1] = ranOut ? 1.f : 0.f;
  transport_->waitingForRanks([&] { transport_->allreduceSum(agreed, 2 * kDigits + 2, transport_->peerTimeout(), what); });
  return {{fromDigits(agreed), fromDigits(agreed + kDigits)}, agreed[2 * kDigits] > 0.f, agreed[2 * kDigits + 1] > 0.f};
}

LockstepAgreement::Outcome LockstepAgreement::beforeUpdate(const std::vector<Batch>& group, size_t delay,
                                                           bool signalled) const {
  ABORT_IF(onceARound(), "LockstepAgreement: ranks that meet once a round do not agree before every update");
  bool whole = group.size() == delay;
  if(!lockstep_)
    return {countsOf(group), signalled, group.empty()};
  return allreduce(countsOf(group), signalled, !whole, "the update's sentences, labels, signals and whether every rank has one");
}

void LockstepAgreement::trained(const std::vector<Batch>& group) {
  Counts c = countsOf(group);
  pending_.sentences += c.sentences;
  pending_.labels += c.labels;
}

LockstepAgreement::Outcome LockstepAgreement::meet(uint64_t updatesDone, bool signalled) {
  ABORT_IF(!onceARound(), "LockstepAgreement: only ranks with local steps meet once a round");
  metAfter_ = updatesDone;
  Outcome o = allreduce(pending_, signalled, ranOut_, "the round's sentences, labels, signals and whether every rank has updates left");
  pending_ = Counts();
  ranOut_ = false;
  return o;
}

LockstepAgreement::Counts LockstepAgreement::unagreed(uint64_t updatesDone) const {
  if(!onceARound() || metAfter_ == updatesDone)  // (met right there: none on any rank)
    return Counts();
  return allreduce(pending_, false, false, "the sentences and labels of the round so far").job;
}

void LockstepAgreement::resume(const Counts& unagreedByTheJob, int rank) {
  pending_ = rank == 0 ? unagreedByTheJob : Counts();
}

}  // namespace marian
