#include "comm/allreduce/allreduce.h"

#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"
#include "common/error.h"

namespace marian {

std::vector<float> AllreduceResult::toDense(size_t n) const {
  if(isDense)
    return dense;
  std::vector<float> out(n, 0.f);
  sparse.addTo(out.data());
  return out;
}

void AllreduceResult::addTo(float* out) const {
  if(isDense) {
    for(size_t i = 0; i < dense.size(); ++i)
      out[i] += dense[i];
  } else {
    sparse.addTo(out);
  }
}

void Allreduce::sumDense(std::vector<float>& values) {
  SparseVector nonzero;
  for(size_t i = 0; i < values.size(); ++i)
    if(values[i] != 0.f) {
      nonzero.indices.push_back(uint32_t(i));
      nonzero.values.push_back(values[i]);
    }
  values = reduce(nonzero, values.size()).toDense(values.size());
}

AllreduceBytes Allreduce::takeBytes() {
  ChannelBytes now = transport_.bytes(channel_);
  AllreduceBytes b;
  b.counted = bytesCounted();
  b.sent = now.sent - taken_.sent;
  b.received = now.received - taken_.received;
  taken_ = now;
  return b;
}

void Allreduce::setChannel(Channel channel) {
  channel_ = channel;
  taken_ = transport_.bytes(channel);
}

void Allreduce::send(int dest, int round, const std::vector<char>& bytes) {
  transport_.send(channel_, dest, round, bytes, transport_.peerTimeout());
}

std::vector<char> Allreduce::recv(int source, int round) {
  return transport_.recv(channel_, source, round, transport_.peerTimeout(), name() + " step " + std::to_string(round))
      .bytes;
}

std::vector<char> Allreduce::exchange(int dest, int source, int round, const std::vector<char>& bytes) {
  return transport_
      .exchange(channel_, dest, source, round, bytes, transport_.peerTimeout(), name() + " step " + std::to_string(round))
      .bytes;
}

Transport::PendingSend Allreduce::startSend(int dest, int round, const std::vector<char>& bytes) {
  return transport_.startSend(channel_, dest, round, bytes);
}

void Allreduce::finishSend(Transport::PendingSend& s) { transport_.finishSend(s, transport_.peerTimeout(), name()); }

std::vector<std::vector<char>> Allreduce::ringAllgather(std::vector<char> mine, int firstRound) {
  int P = transport_.size(), r = transport_.rank();
  std::vector<std::vector<char>> all(static_cast<size_t>(P));
  all[size_t(r)] = std::move(mine);
  for(int s = 0; s < P - 1; ++s) {  // forward what arrived last step
    int from = (r - s - 1 + 2 * P) % P;
    all[size_t(from)] = exchange((r + 1) % P, (r + P - 1) % P, firstRound + s, all[size_t((from + 1) % P)]);
  }
  return all;
}

std::vector<std::vector<char>> Allreduce::directExchange(const std::vector<const std::vector<char>*>& toRank,
                                                         const std::vector<size_t>& fromSizes, int round) {
  int P = transport_.size(), r = transport_.rank();
  size_t segment = AllreduceSettings().segmentBytes;
  std::vector<std::vector<char>> from(static_cast<size_t>(P));
  std::vector<Transport::PendingRecv> receives;
  std::vector<Transport::PendingSend> sends;
  for(int s = 1; s < P; ++s) {  // (one tag per source: its segments arrive in the order sent)
    int source = (r - s + P) % P;
    from[size_t(source)].resize(fromSizes[size_t(source)]);
    for(size_t at = 0; at < from[size_t(source)].size(); at += segment)
      receives.push_back(transport_.startRecv(channel_, source, round, from[size_t(source)].data() + at,
                                              std::min(segment, from[size_t(source)].size() - at)));
  }
  for(int s = 1; s < P; ++s) {  // destinations rotated: no rank is sent to by all at once
    int dest = (r + s) % P;
    const std::vector<char>& bytes = *toRank[size_t(dest)];
    for(size_t at = 0; at < bytes.size(); at += segment)
      sends.push_back(transport_.startSend(channel_, dest, round, bytes.data() + at, std::min(segment, bytes.size() - at)));
  }
  for(Transport::PendingRecv& receive : receives)
    transport_.finishRecv(receive, transport_.peerTimeout(), name() + " direct exchange");
  for(Transport::PendingSend& send : sends)
    transport_.finishSend(send, transport_.peerTimeout(), name());
  return from;
}

SparseVector Allreduce::splitAndReduce(const SparseVector& local, const std::vector<uint32_t>& starts,
                                       int firstRound) {
  int P = transport_.size(), r = transport_.rank();
  // every part read where it lies (my own pairs in `local`, the others in their messages) and
  // summed once
  auto region = [&](int b) { return sliceView(local.view(), starts[size_t(b)], starts[size_t(b) + 1]); };
  std::vector<std::vector<char>> received(static_cast<size_t>(P));
  std::vector<SparseView> parts(static_cast<size_t>(P));
  parts[size_t(r)] = region(r);
  for(int s = 1; s < P; ++s) {
    int dest = (r + s) % P, source = (r - s + P) % P;
    received[size_t(source)] = exchange(dest, source, firstRound + s - 1, packSparse(region(dest)));
    SparseView in = parts[size_t(source)] = readSparse(received[size_t(source)]);
    for(size_t j = 0; j < in.size; ++j)
      ABORT_IF(in.indices[j] < starts[size_t(r)] || in.indices[j] >= starts[size_t(r) + 1] ||
                   (j > 0 && in.indices[j] <= in.indices[j - 1]),
               "{}: rank {} sent index {} outside my region [{}, {}) or out of order", name(), source, in.indices[j],
               starts[size_t(r)], starts[size_t(r) + 1]);
  }
  return mergeSparse(parts);
}

void Allreduce::checkIndices(SparseView v, size_t n) const {
  for(size_t j = 0; j < v.size; ++j) {
    ABORT_IF(v.indices[j] >= n, "{}: index {} outside dimension {}", name(), v.indices[j], n);
    ABORT_IF(j > 0 && v.indices[j] <= v.indices[j - 1], "{}: indices not ascending at entry {}", name(), j);
  }
}

}  // namespace marian
