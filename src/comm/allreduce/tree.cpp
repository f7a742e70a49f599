// "tree" (seed 003, Langford: allreduce = reduce + broadcast over a binary tree, pipelined), as
// two trees at once (NCCL's double binary tree): the first half of the vector goes over the tree
// where rank r's children are 2r+1 and 2r+2, the second half over its mirror (rank r there is
// rank P-1-r here), so the ranks that are leaves of one are the inner ranks of the other and no
// rank carries the whole vector through both links: with P = 4 every rank sends and receives
// 1.5 n values, the ring's 2 (P-1)/P n; a single tree's inner ranks move 2n-3n. Each half travels
// in segments (AllreduceSettings::segmentBytes, longer for halves of more than 4096), so while a parent adds segment c its children
// already send c+1 and the depth costs latency only once; the broadcast runs in the same pipeline
// kLag segments behind the reduction. Receives are posted kAhead segments ahead into reused
// buffers; sends go from the vector (no copies) and are finished only when the vector changes
// under them or at the end, so no rank waits on a send while others wait on it.
#include <algorithm>

#include "comm/allreduce/dense_allreduce.h"
#include "common/equal_split.h"

namespace marian {

namespace {

class TreeAllreduce : public DenseAllreduce {
public:
  TreeAllreduce(Transport& t, const AllreduceSettings& s)
      : DenseAllreduce(t), setSegment_(std::max<size_t>(1, s.segmentBytes / sizeof(float))) {}
  std::string name() const override { return "tree"; }

  void sumDense(std::vector<float>& v) override {
    int P = transport_.size();
    if(P == 1)
      return;
    size_t n = v.size();
    trees_.clear();
    // segments as set, or longer where a half would need more than the rounds allow
    segment_ = std::max(setSegment_, (n - n / 2 + kMaxSegments - 1) / kMaxSegments);
    trees_.push_back(makeTree(false, Range{0, n / 2}));
    trees_.push_back(makeTree(true, Range{n / 2, n - n / 2}));
    size_t segments = 0;
    for(Tree& t : trees_)
      segments = std::max(segments, t.segments);
    for(Tree& t : trees_)
      for(size_t c = 0; c < std::min(t.segments, kAhead); ++c)
        postReceives(t, c);

    // iteration c adds segment c of each tree and passes it up (or, at the root, down), and
    // passes segment c - kLag of the broadcast down
    for(size_t c = 0; c < segments + kLag; ++c)
      for(Tree& t : trees_) {
        if(c < t.segments)
          reduceSegment(t, c, v);
        if(t.parent >= 0 && c >= kLag && c - kLag < t.segments)
          broadcastSegment(t, c - kLag, v);
      }
    for(Tree& t : trees_)
      for(auto* sends : {&t.up, &t.down})
        for(Transport::PendingSend& p : *sends)
          if(p.state)
            transport_.finishSend(p, transport_.peerTimeout(), name());
  }

private:
  static constexpr size_t kLag = 2;           // broadcast segments behind the reduction
  static constexpr size_t kAhead = 4;         // segments received ahead
  static constexpr size_t kMaxSegments = 4096;  // per half: the rounds of both trees stay below 2^14

  struct Tree {
    Range part;  // the values this tree carries
    int parent = -1;
    std::vector<int> children;
    size_t segments = 0;
    int firstRound = 0;  // reduce rounds firstRound + c, broadcast rounds firstRound + kMaxSegments + c
    std::vector<std::vector<float>> slots;  // per child, and the parent last: kAhead segments each
    std::vector<std::vector<Transport::PendingRecv>> fromChildren;  // by segment
    std::vector<Transport::PendingRecv> fromParent;
    std::vector<Transport::PendingSend> up, down;
  };

  Range segmentOf(const Tree& t, size_t c) const {
    size_t begin = c * segment_;
    return {t.part.offset + begin, std::min(segment_, t.part.size - begin)};
  }

  Tree makeTree(bool mirrored, Range part) {
    int P = transport_.size();
    auto label = [&](int node) { return mirrored ? P - 1 - node : node; };  // node -> rank
    int node = label(transport_.rank());  // the mirror is its own inverse
    Tree t;
    t.part = part;
    t.parent = node == 0 ? -1 : label((node - 1) / 2);
    for(int c : {2 * node + 1, 2 * node + 2})
      if(c < P)
        t.children.push_back(label(c));
    t.segments = (part.size + segment_ - 1) / segment_;
    t.firstRound = mirrored ? 2 * int(kMaxSegments) : 0;
    t.slots.assign(t.children.size() + (t.parent >= 0 ? 1 : 0), std::vector<float>(kAhead * segment_));
    t.fromChildren.assign(t.children.size(), std::vector<Transport::PendingRecv>(t.segments));
    t.fromParent.resize(t.parent >= 0 ? t.segments : 0);
    t.up.resize(t.parent >= 0 ? t.segments : 0);
    return t;
  }

  float* slot(Tree& t, size_t k, size_t c) { return t.slots[k].data() + (c % kAhead) * segment_; }

  // segment c from every child and from the parent, each into its slot
  void postReceives(Tree& t, size_t c) {
    size_t bytes = segmentOf(t, c).size * sizeof(float);
    for(size_t k = 0; k < t.children.size(); ++k)
      t.fromChildren[k][c] =
          transport_.startRecv(channel_, t.children[k], t.firstRound + int(c), slot(t, k, c), bytes);
    if(t.parent >= 0)
      t.fromParent[c] = transport_.startRecv(channel_, t.parent, t.firstRound + int(kMaxSegments + c),
                                             slot(t, t.children.size(), c), bytes);
  }

  void sendDown(Tree& t, size_t c, const std::vector<float>& v) {
    Range s = segmentOf(t, c);
    for(int child : t.children)
      t.down.push_back(transport_.startSend(channel_, child, t.firstRound + int(kMaxSegments + c),
                                            v.data() + s.offset, s.size * sizeof(float)));
  }

  void reduceSegment(Tree& t, size_t c, std::vector<float>& v) {
    Range s = segmentOf(t, c);
    for(size_t k = 0; k < t.children.size(); ++k) {
      transport_.finishRecv(t.fromChildren[k][c], transport_.peerTimeout(), name() + " reduce segment");
      const float* in = slot(t, k, c);
      for(size_t i = 0; i < s.size; ++i)
        v[s.offset + i] += in[i];
    }
    if(t.parent >= 0)
      t.up[c] = transport_.startSend(channel_, t.parent, t.firstRound + int(c), v.data() + s.offset,
                                     s.size * sizeof(float));
    else
      sendDown(t, c, v);  // the root's sum is final
    if(t.parent < 0 && c + kAhead < t.segments)  // the slots of segment c are free again
      postReceives(t, c + kAhead);
  }

  void broadcastSegment(Tree& t, size_t c, std::vector<float>& v) {
    Range s = segmentOf(t, c);
    transport_.finishRecv(t.fromParent[c], transport_.peerTimeout(), name() + " broadcast segment");
    if(t.up[c].state)  // the partial sum must have left before the sum overwrites it
      transport_.finishSend(t.up[c], transport_.peerTimeout(), name());
    std::copy(slot(t, t.children.size(), c), slot(t, t.children.size(), c) + s.size, v.begin() + long(s.offset));
    sendDown(t, c, v);
    if(c + kAhead < t.segments)  // the slots of segment c are free again
      postReceives(t, c + kAhead);
  }

  size_t setSegment_;  // floats per message, as set
  size_t segment_ = 0; // this call's
  std::vector<Tree> trees_;
};

}  // namespace

std::unique_ptr<Allreduce> createTree(Transport& t, const AllreduceSettings& s) {
  return std::make_unique<TreeAllreduce>(t, s);
}

}  // namespace marian
