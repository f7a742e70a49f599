// "ring": dense reduce-scatter then allgather around the ring of ranks, P-1 steps each; every
// rank sends and receives 2 (P-1)/P n values, the bandwidth-optimal dense allreduce. Our own, so
// that its bytes are counted and it can be overlapped; the reference the sparse ones must match.
// Two rings at once, one per half of the vector and direction (as NCCL's channels), each
// pipelined in segments (AllreduceSettings::segmentBytes): the chunk a rank receives at step t
// is the one it sends at step t+1, so each segment goes on as soon as it is added, straight from
// the vector (no copy); receives are posted two steps ahead into two reused buffers, so a
// rank's uplink and downlink stay busy at once.
#include <algorithm>
#include <cstring>

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
    int P = transport_.size();
    if(P == 1)
      return;
    size_t n = v.size();
    passes_.resize(2);
    setUp(passes_[0], Range{0, n / 2}, false);
    setUp(passes_[1], Range{n / 2, n - n / 2}, true);
    int steps = 2 * (P - 1);  // reduce-scatter steps, then allgather steps
    for(Pass& pass : passes_) {
      postReceives(pass, 0);
      if(steps > 1)
        postReceives(pass, 1);
      for(size_t j = 0; j < segments(chunkAt(pass, 0, false)); ++j)
        sendSegment(pass, 0, j, v);
    }
    for(int t = 0; t < steps; ++t) {
      size_t most = 0;
      for(Pass& pass : passes_)
        most = std::max(most, segments(chunkAt(pass, t, true)));
      for(size_t j = 0; j < most; ++j)  // the two directions segment by segment
        for(Pass& pass : passes_)
          if(j < segments(chunkAt(pass, t, true)))
            takeSegment(pass, t, j, v);
      if(t + 2 < steps)  // this step's buffers are free again
        for(Pass& pass : passes_)
          postReceives(pass, t + 2);
    }
    for(Pass& pass : passes_)
      for(auto& step : pass.sends)
        for(Transport::PendingSend& send : step)
          if(send.state)
            transport_.finishSend(send, transport_.peerTimeout(), name());
  }

private:
  // One ring over one half of the vector; the second half goes round the other way, so each rank
  // sends to and receives from both neighbours and one slow step of one ring leaves the other
  // going. At step t the rank at position `pos` sends chunk pos - t and receives chunk pos - t - 1
  // (mod P) of its half, in both phases; after the reduce-scatter it owns chunk pos + 1, summed.
  struct Pass {
    Range part;
    int pos = 0, next = 0, prev = 0, firstRound = 0;
    std::vector<float> scratch[2];  // receives of even and odd steps, reused between calls
    std::vector<std::vector<Transport::PendingRecv>> receives;  // by step, then segment
    std::vector<std::vector<Transport::PendingSend>> sends;
  };

  void setUp(Pass& pass, Range part, bool reversed) {
    int P = transport_.size(), r = transport_.rank();
    auto rankAt = [&](int pos) { return reversed ? P - 1 - pos : pos; };  // its own inverse
    pass.part = part;
    pass.pos = rankAt(r);
    pass.next = rankAt((pass.pos + 1) % P);
    pass.prev = rankAt((pass.pos + P - 1) % P);
    pass.firstRound = reversed ? 2 * P : 0;  // steps < 2P
    size_t largest = (part.size + size_t(P) - 1) / size_t(P);
    for(auto& buffer : pass.scratch)
      buffer.resize(std::max<size_t>(largest, 1));
    pass.receives.assign(size_t(2 * (P - 1)), {});
    pass.sends.assign(size_t(2 * (P - 1)), {});
  }

  Range chunkAt(const Pass& pass, int t, bool receiving) const {
    int P = transport_.size();
    int c = ((pass.pos - t - (receiving ? 1 : 0)) % P + P) % P;
    Range chunk = equalPart(pass.part.size, size_t(c), size_t(P));
    return {pass.part.offset + chunk.offset, chunk.size};
  }
  size_t segments(Range chunk) const { return (chunk.size + segment_ - 1) / segment_; }
  Range segmentOf(Range chunk, size_t j) const {
    size_t begin = j * segment_;
    return {chunk.offset + begin, std::min(segment_, chunk.size - begin)};
  }

  void postReceives(Pass& pass, int t) {
    Range chunk = chunkAt(pass, t, true);
    float* into = pass.scratch[size_t(t % 2)].data();
    for(size_t j = 0; j < segments(chunk); ++j) {
      Range s = segmentOf(chunk, j);
      pass.receives[size_t(t)].push_back(transport_.startRecv(
          channel_, pass.prev, pass.firstRound + t, into + (s.offset - chunk.offset), s.size * sizeof(float)));
    }
  }

  void sendSegment(Pass& pass, int t, size_t j, const std::vector<float>& v) {
    Range s = segmentOf(chunkAt(pass, t, false), j);
    pass.sends[size_t(t)].push_back(transport_.startSend(channel_, pass.next, pass.firstRound + t,
                                                         v.data() + s.offset, s.size * sizeof(float)));
  }

  // Segment j of step t has arrived: added (reduce-scatter) or copied (allgather) into v, and
  // passed on at once, since what arrives at step t is what goes on at step t+1.
  void takeSegment(Pass& pass, int t, size_t j, std::vector<float>& v) {
    int P = transport_.size(), steps = 2 * (P - 1);
    Range chunk = chunkAt(pass, t, true), s = segmentOf(chunk, j);
    transport_.finishRecv(pass.receives[size_t(t)][j], transport_.peerTimeout(), name() + " segment");
    // this segment of v was last sent P-1 steps ago (the same chunk, one phase earlier): that
    // send must be done before v changes under it
    if(int before = t - (P - 1); before >= 0 && j < pass.sends[size_t(before)].size() &&
                                 pass.sends[size_t(before)][j].state)
      transport_.finishSend(pass.sends[size_t(before)][j], transport_.peerTimeout(), name());
    const float* values = pass.scratch[size_t(t % 2)].data() + (s.offset - chunk.offset);
    if(t < P - 1)
      for(size_t i = 0; i < s.size; ++i)
        v[s.offset + i] += values[i];
    else
      std::memcpy(v.data() + s.offset, values, s.size * sizeof(float));
    if(t + 1 < steps)
      sendSegment(pass, t + 1, j, v);
  }

  size_t segment_;  // floats per message
  std::vector<Pass> passes_;
};

}  // namespace

std::unique_ptr<Allreduce> createRing(Transport& t, const AllreduceSettings& s) {
  return std::make_unique<RingAllreduce>(t, s);
}

}  // namespace marian
