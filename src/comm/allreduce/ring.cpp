// "ring": dense reduce-scatter then allgather around the ring of ranks, P-1 steps each; every
// rank sends and receives 2 (P-1)/P n values, the bandwidth-optimal dense allreduce. Our own, so
// that its bytes are counted and it can be overlapped; the reference the sparse ones must match.
// Pipelined in segments (AllreduceSettings::segmentBytes): the chunk a rank receives at step t
// is the one it sends at step t+1, so each segment goes on as soon as it is added, straight from
// the vector (no copy); receives are posted two steps ahead into two reused buffers, so a
// rank's uplink and downlink stay busy at once and large messages need no handshake wait.
#include <algorithm>
#include <cstring>
#include <deque>

#include "comm/allreduce/dense_allreduce.h"
#include "common/equal_split.h"

namespace marian {

namespace {

class RingAllreduce : public DenseAllreduce {
public:
  RingAllreduce(Transport& t, const AllreduceSettings& s)
      : DenseAllreduce(t), segment_(std::max<size_t>(1, s.segmentBytes / sizeof(float))) {}
  std::string name() const override { return "ring"; }

  void sumDense(std::vector<float>& v) override {
    int P = transport_.size(), r = transport_.rank();
    if(P == 1)
      return;
    size_t n = v.size();
    int next = (r + 1) % P, prev = (r + P - 1) % P;
    int steps = 2 * (P - 1);  // reduce-scatter steps, then allgather steps
    // At step t a rank sends chunk r - t and receives chunk r - t - 1 (mod P), in both phases;
    // after the reduce-scatter it owns chunk r + 1, summed.
    auto chunkAt = [&](int t, bool receiving) {
      int c = ((r - t - (receiving ? 1 : 0)) % P + P) % P;
      return equalPart(n, size_t(c), size_t(P));
    };
    auto segments = [&](Range chunk) { return (chunk.size + segment_ - 1) / segment_; };
    auto segmentOf = [&](Range chunk, size_t j) {
      size_t begin = j * segment_;
      return Range{chunk.offset + begin, std::min(segment_, chunk.size - begin)};
    };
    size_t largest = (n + size_t(P) - 1) / size_t(P);
    for(auto& buffer : scratch_)
      buffer.resize(std::max<size_t>(largest, 1));

    std::vector<std::vector<Transport::PendingRecv>> receives{size_t(steps)};
    std::vector<std::deque<Transport::PendingSend>> sends{size_t(steps)};  // deque: stable addresses
    auto postReceives = [&](int t) {
      Range chunk = chunkAt(t, true);
      float* into = scratch_[size_t(t % 2)].data();
      for(size_t j = 0; j < segments(chunk); ++j) {
        Range s = segmentOf(chunk, j);
        receives[size_t(t)].push_back(transport_.startRecv(Channel::collective, prev, firstRound_ + t,
                                                           into + (s.offset - chunk.offset), s.size * sizeof(float)));
      }
    };
    std::string what = name() + " segment";
    // At most kSendWindow sends in flight, finished oldest first: MPI then moves them one after
    // the other, so the next rank gets whole segments early, instead of all of a step's at its end.
    std::deque<Transport::PendingSend*> inFlight;
    auto retireOldest = [&] {
      if(inFlight.front()->state)
        transport_.finishSend(*inFlight.front(), kCollectiveTimeoutSeconds, what);
      inFlight.pop_front();
    };
    auto sendSegment = [&](int t, size_t j) {
      while(inFlight.size() >= kSendWindow)
        retireOldest();
      Range s = segmentOf(chunkAt(t, false), j);
      sends[size_t(t)].push_back(
          transport_.startSend(Channel::collective, next, firstRound_ + t, v.data() + s.offset, s.size * sizeof(float)));
      inFlight.push_back(&sends[size_t(t)].back());
    };

    postReceives(0);
    if(steps > 1)
      postReceives(1);
    for(size_t j = 0; j < segments(chunkAt(0, false)); ++j)
      sendSegment(0, j);
    for(int t = 0; t < steps; ++t) {
      Range chunk = chunkAt(t, true);
      const float* in = scratch_[size_t(t % 2)].data();
      for(size_t j = 0; j < segments(chunk); ++j) {
        transport_.finishRecv(receives[size_t(t)][j], kCollectiveTimeoutSeconds, what);
        Range s = segmentOf(chunk, j);
        // this segment of v was last sent P-1 steps ago (the same chunk, one phase earlier):
        // that send must be done before v changes under it
        if(int before = t - (P - 1); before >= 0 && j < sends[size_t(before)].size() && sends[size_t(before)][j].state)
          transport_.finishSend(sends[size_t(before)][j], kCollectiveTimeoutSeconds, what);
        const float* values = in + (s.offset - chunk.offset);
        if(t < P - 1)
          for(size_t i = 0; i < s.size; ++i)
            v[s.offset + i] += values[i];
        else
          std::memcpy(v.data() + s.offset, values, s.size * sizeof(float));
        if(t + 1 < steps)  // what arrived at step t is what goes on at step t+1
          sendSegment(t + 1, j);
      }
      if(t + 2 < steps)  // this step's buffer is free again
        postReceives(t + 2);
    }
    while(!inFlight.empty())
      retireOldest();
  }

private:
  static constexpr int firstRound_ = 0;
  static constexpr size_t kSendWindow = 4;
  size_t segment_;                       // floats per message
  std::vector<float> scratch_[2];        // receives of even and odd steps, reused between calls
};

}  // namespace

std::unique_ptr<Allreduce> createRing(Transport& t, const AllreduceSettings& s) {
  return std::make_unique<RingAllreduce>(t, s);
}

}  // namespace marian
