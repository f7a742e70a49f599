#pragma once
// defines: the base tags of the exchanges whose messages share a channel, in one place so that
// their ranges cannot overlap (a message another exchange's receive matched would be read as its
// data). An exchange's rounds count up from its base (tag = base + step): the plain allreduce
// algorithms' from 0, the others' from a range of kTagRange of their own. All stay within 32767,
// the largest tag every MPI library must accept (UCX allows 2^23 - 1).
namespace marian {

constexpr int kTagRange = 1 << 12;  // steps a range holds: 2 (P - 1) of a ring allreduce up to P = 2,049

// oktopk's phases (comm/allreduce/oktopk.cpp)
constexpr int kOkTopkRepartitionTag = 0, kOkTopkSplitTag = 1 * kTagRange, kOkTopkThresholdTag = 2 * kTagRange,
              kOkTopkSizesTag = 3 * kTagRange, kOkTopkBalanceTag = 4 * kTagRange, kOkTopkGatherTag = 5 * kTagRange;
// the compressed means' worker and server steps (comm/allreduce/compressed_mean.cpp)
constexpr int kToServersTag = 6 * kTagRange, kFromServersTag = 7 * kTagRange;
// chunk top-k's allgather (comm/allreduce/chunk_topk_mean.cpp): the upper half of the last range
constexpr int kChunkTopkGatherTag = 7 * kTagRange + kTagRange / 2;
// checkpoint parts gathered on rank 0 (comm/state_gather.cpp): successive gathers of one save
// share it, since messages of one source and tag arrive in order
constexpr int kCheckpointTag = 32766;
// each rank's setup sent to rank 0 before training (training/loop/rank_agreement.cpp): it shares
// the checkpoint's tag (no other is free above chunk top-k's range), since the setups are all
// received, and rank 0's verdict broadcast, before any rank can gather a checkpoint
constexpr int kRankSetupTag = kCheckpointTag;

static_assert(kOkTopkGatherTag + kTagRange <= kToServersTag && kToServersTag + kTagRange <= kFromServersTag);
static_assert(kFromServersTag + kTagRange / 2 <= kChunkTopkGatherTag);
static_assert(kChunkTopkGatherTag + kTagRange / 2 - 2 <= kCheckpointTag && kCheckpointTag <= 32767);

}  // namespace marian
