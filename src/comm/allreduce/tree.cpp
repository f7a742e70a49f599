// "tree" (seed 003, Langford: allreduce = reduce + broadcast over a binary tree, pipelined): rank
// r's children are 2r+1 and 2r+2. The vector travels in chunks of about 1 MB, so while a parent
// adds chunk c its children already send chunk c+1, and the depth of the tree costs latency only
// once. The broadcast runs in the same pipeline, kLag chunks behind the reduction, so a rank's
// uplink and downlink are busy at once. An inner rank receives 3n values and sends 3n
// (Langford's "bandwidth <= 6n").
#include <algorithm>
#include <cstring>
#include <deque>

#include "comm/allreduce/dense_allreduce.h"
#include "comm/allreduce/packing.h"
#include "common/error.h"

namespace marian {

namespace {

class TreeAllreduce : public DenseAllreduce {
public:
  using DenseAllreduce::DenseAllreduce;
  std::string name() const override { return "tree"; }

  void sumDense(std::vector<float>& v) override {
    int P = transport_.size(), r = transport_.rank();
    if(P == 1)
      return;
    size_t n = v.size();
    const size_t kChunk = 256 * 1024;  // floats
    int chunks = int(std::min<size_t>(8192, std::max<size_t>(1, (n + kChunk - 1) / kChunk)));
    auto chunk = [&](int c) {
      size_t begin = n * size_t(c) / size_t(chunks), end = n * size_t(c + 1) / size_t(chunks);
      return std::make_pair(begin, end - begin);
    };
    int parent = r == 0 ? -1 : (r - 1) / 2;
    std::vector<int> children;
    for(int c : {2 * r + 1, 2 * r + 2})
      if(c < P)
        children.push_back(c);

    // iteration c reduces chunk c towards rank 0 and passes on chunk c - kLag of the broadcast
    // from rank 0, which rank 0 sends as soon as it has reduced it
    const int kLag = 2;
    auto broadcast = [&](int c) {
      auto [begin, size] = chunk(c);
      if(parent >= 0) {
        std::vector<char> in = recv(parent, chunks + c);
        ABORT_IF(in.size() != size * sizeof(float), "tree: broadcast chunk {} has {} bytes, not {}", c, in.size(),
                 size * sizeof(float));
        if(size)
          std::memcpy(v.data() + begin, in.data(), size * sizeof(float));
      }
      for(int child : children)
        post(child, chunks + c, packDense(v.data() + begin, size));
    };
    for(int c = 0; c < chunks + kLag; ++c) {
      if(c < chunks) {
        auto [begin, size] = chunk(c);
        for(int child : children) {
          std::vector<char> in = recv(child, c);
          ABORT_IF(in.size() != size * sizeof(float), "tree: chunk {} from rank {} has {} bytes, not {}", c, child,
                   in.size(), size * sizeof(float));
          const float* values = reinterpret_cast<const float*>(in.data());
          for(size_t i = 0; i < size; ++i)
            v[begin + i] += values[i];
        }
        if(parent >= 0)
          post(parent, c, packDense(v.data() + begin, size));
        else
          broadcast(c);
      }
      if(parent >= 0 && c >= kLag)
        broadcast(c - kLag);
    }
    while(!pending_.empty())
      retireOldest();
  }

private:
  // at most a few sends in flight: enough to keep both links of a rank busy
  void post(int dest, int round, std::vector<char> bytes) {
    if(pending_.size() >= 4)
      retireOldest();
    pending_.push_back({std::move(bytes), {}});
    pending_.back().send = startSend(dest, round, pending_.back().bytes);
  }
  void retireOldest() {
    finishSend(pending_.front().send);
    pending_.pop_front();
  }
  struct InFlight {
    std::vector<char> bytes;
    Transport::PendingSend send;
  };
  std::deque<InFlight> pending_;  // deque: the buffers of earlier sends stay where they are
};

}  // namespace

std::unique_ptr<Allreduce> createTree(Transport& t, const AllreduceSettings&) {
  return std::make_unique<TreeAllreduce>(t);
}

}  // namespace marian
