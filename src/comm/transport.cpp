#include "comm/transport.h"

#include "common/error.h"

namespace marian {

namespace {
std::string peer(int rank) { return rank < 0 ? std::string("any") : std::to_string(rank); }
}  // namespace

void Transport::send(Channel channel, int dest, int tag, const std::vector<char>& bytes, double timeoutSeconds) {
  ABORT_IF(dest < 0 || dest >= size(), "rank {}: send to rank {} of {}", rank(), dest, size());
  // a send is a started send finished at once
  PendingSend p = startSendImpl(channel, dest, tag, bytes.data(), bytes.size());
  p.dest = dest;
  finishSendImpl(p, timeoutSeconds, "a message");
  sent_[int(channel)] += bytes.size();
}

Transport::Message Transport::recv(Channel channel, int source, int tag, double timeoutSeconds,
                                   const std::string& what) {
  ABORT_IF(source < -1 || source >= size(), "rank {}: receive from rank {} of {}", rank(), source, size());
  Message m = recvImpl(channel, source, tag, timeoutSeconds, what);
  received_[int(channel)] += m.bytes.size();
  return m;
}

Transport::Message Transport::exchange(Channel channel, int dest, int source, int tag, const std::vector<char>& bytes,
                                       double timeoutSeconds, const std::string& what) {
  ABORT_IF(dest < 0 || dest >= size() || source < -1 || source >= size(),
           "rank {}: exchange with ranks {} and {} of {}", rank(), dest, source, size());
  // the send started first, so that every rank of a ring can receive
  PendingSend p = startSendImpl(channel, dest, tag, bytes.data(), bytes.size());
  p.dest = dest;
  Message m = recvImpl(channel, source, tag, timeoutSeconds, what);
  finishSendImpl(p, timeoutSeconds, what);
  sent_[int(channel)] += bytes.size();
  received_[int(channel)] += m.bytes.size();
  return m;
}

Transport::PendingSend Transport::startSend(Channel channel, int dest, int tag, const std::vector<char>& bytes) {
  return startSend(channel, dest, tag, bytes.data(), bytes.size());
}

Transport::PendingSend Transport::startSend(Channel channel, int dest, int tag, const void* data, size_t size) {
  ABORT_IF(dest < 0 || dest >= this->size(), "rank {}: send to rank {} of {}", rank(), dest, this->size());
  PendingSend p = startSendImpl(channel, dest, tag, data, size);
  p.channel = channel;
  p.dest = dest;
  p.size = size;
  return p;
}

Transport::PendingRecv Transport::startRecv(Channel channel, int source, int tag, void* into, size_t size) {
  ABORT_IF(source < 0 || source >= this->size(), "rank {}: posted receive from rank {} of {}", rank(), source,
           this->size());
  PendingRecv r;
  r.channel = channel;
  r.source = source;
  r.tag = tag;
  r.into = into;
  r.size = size;
  startRecvImpl(r);
  return r;
}

void Transport::finishRecv(PendingRecv& r, double timeoutSeconds, const std::string& what) {
  ABORT_IF(!r.state, "finishRecv without a posted receive");
  finishRecvImpl(r, timeoutSeconds, what);
  r.state.reset();
  received_[int(r.channel)] += r.size;
}

void Transport::finishSend(PendingSend& p, double timeoutSeconds, const std::string& what) {
  ABORT_IF(!p.state, "finishSend without a pending send");
  finishSendImpl(p, timeoutSeconds, what);
  p.state.reset();
  sent_[int(p.channel)] += p.size;
}

ChannelBytes Transport::bytes(Channel channel) const {
  ChannelBytes b;
  b.sent = sent_[int(channel)];
  b.received = received_[int(channel)];
  return b;
}

std::string Transport::noAnswer(const std::string& what, int source, double timeoutSeconds) const {
  return format("rank {}: no answer for {} from rank {} within {} s; stopping the job", rank(), what, peer(source),
                timeoutSeconds);
}

std::string Transport::noDelivery(const std::string& what, int dest, double timeoutSeconds) const {
  return format("rank {}: rank {} took no delivery of {} within {} s; stopping the job", rank(), dest, what,
                timeoutSeconds);
}

std::string Transport::notEveryRank(const std::string& what, double timeoutSeconds) const {
  return format("rank {}: not every rank took part in {} within {} s; stopping the job", rank(), what,
                timeoutSeconds);
}

void Transport::noteStep(double computeSeconds, double waitSeconds) {
  std::lock_guard<std::mutex> lock(activityMutex_);
  activity_.steps += 1;
  activity_.computeSeconds += computeSeconds;
  activity_.waitSeconds += waitSeconds;
}

void Transport::noteWait(double waitSeconds) {
  std::lock_guard<std::mutex> lock(activityMutex_);
  activity_.waitSeconds += waitSeconds;
}

RankActivity Transport::activity() const {
  std::lock_guard<std::mutex> lock(activityMutex_);
  return activity_;
}

}  // namespace marian
