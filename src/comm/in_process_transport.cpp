#include "comm/in_process_transport.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "common/error.h"

namespace marian {

namespace {

struct Envelope {
  int source = -1, tag = -1;
  std::vector<char> bytes;
  std::shared_ptr<bool> taken;  // the send's completion: set by the receiver, under the lock
};

// A receive posted by startRecv that no message has filled yet.
struct Posted {
  int source = -1, tag = -1;
  void* into = nullptr;
  size_t size = 0;
  std::shared_ptr<size_t> filled;  // the size of the message that filled it, once one did (under the lock)
};

// One call of a collective by every rank; calls are matched by their order on each rank.
struct Round {
  std::shared_ptr<std::vector<std::vector<char>>> parts;  // by rank; once reduced, the one result
  int arrived = 0, collected = 0;
  bool ready = false;  // every part there, and reduced where asked
  std::string error;   // what the reduction threw, for every rank to throw
};

// allreduceSum (collective channel) and broadcast/barrier (control) are ordered separately, as
// MpiTransport runs them on communicators of their own.
constexpr int kCollectiveGroup = 0, kControlGroup = 1, kGroups = 2;

}  // namespace

struct InProcessNetwork::Shared {
  explicit Shared(int size) : P(size), mailboxes(size_t(kChannels * size)), posted(size_t(kChannels * size)) {
    for(auto& c : calls)
      c.assign(size_t(P), 0);
  }

  const int P;
  std::mutex mutex;
  std::condition_variable changed;  // a message, a delivery, an arrival at a collective, the stop
  std::vector<std::deque<Envelope>> mailboxes;  // [channel * P + destination], in arrival order
  std::vector<std::deque<Posted>> posted;       // [channel * P + destination], in posting order
  std::map<uint64_t, Round> rounds[kGroups];    // by call number
  std::vector<uint64_t> calls[kGroups];         // per rank: its calls so far
  bool stopped = false;
  int stoppedBy = -1;
  std::string reason;

  std::deque<Envelope>& mailbox(Channel channel, int dest) {
    return mailboxes[size_t(int(channel) * P + dest)];
  }
  std::deque<Posted>& postedAt(Channel channel, int dest) { return posted[size_t(int(channel) * P + dest)]; }

  // Waits under `lock` until ready() (true) or the deadline (false; timeoutSeconds 0: none);
  // throws once the network is stopped.
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, int rank, double timeoutSeconds, Ready ready) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(timeoutSeconds));
    for(;;) {
      if(stopped)
        throw Error(format("rank {}: the job was stopped: {}", rank, reason));
      if(ready())
        return true;
      if(timeoutSeconds <= 0)
        changed.wait(lock);
      else if(std::chrono::steady_clock::now() >= deadline)
        return false;
      else
        changed.wait_until(lock, deadline);
    }
  }
};

InProcessNetwork::InProcessNetwork(int size) {
  ABORT_IF(size < 1, "An in-process network needs at least one rank, not {}", size);
  shared_ = std::make_unique<Shared>(size);
  for(int r = 0; r < size; ++r)
    ranks_.emplace_back(new InProcessTransport(*this, r));
}

InProcessNetwork::~InProcessNetwork() = default;

void InProcessNetwork::stop(const std::string& why, int byRank) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if(!shared_->stopped) {
    shared_->stopped = true;
    shared_->stoppedBy = byRank;
    shared_->reason = why;
  }
  shared_->changed.notify_all();
}

void InProcessNetwork::run(const std::function<void(Transport&)>& body) {
  std::vector<std::exception_ptr> errors(ranks_.size());
  std::vector<std::thread> threads;
  for(int r = 0; r < size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(rank(r));
      } catch(const std::exception& e) {
        errors[size_t(r)] = std::current_exception();
        stop(e.what(), r);
      } catch(...) {
        errors[size_t(r)] = std::current_exception();
        stop(format("rank {} failed", r), r);
      }
    });
  for(std::thread& t : threads)
    t.join();
  int first = shared_->stoppedBy;  // the threads are done: nothing changes it now
  if(first >= 0 && errors[size_t(first)])
    std::rethrow_exception(errors[size_t(first)]);
  for(const std::exception_ptr& e : errors)
    if(e)
      std::rethrow_exception(e);
}

int InProcessTransport::size() const { return network_.size(); }

void InProcessTransport::abort(const std::string& why) {
  network_.stop(why, rank_);
  throw Error(why);
}

Transport::PendingSend InProcessTransport::startSendImpl(Channel channel, int dest, int tag, const void* data,
                                                         size_t size) {
  std::vector<char> bytes(size);
  if(size)
    std::memcpy(bytes.data(), data, size);
  auto& s = *network_.shared_;
  auto taken = std::make_shared<bool>(false);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if(s.stopped)
      throw Error(format("rank {}: the job was stopped: {}", rank_, s.reason));
    // a receive posted for it takes it at once, as MPI delivers into a posted buffer
    std::deque<Posted>& posted = s.postedAt(channel, dest);
    auto match = std::find_if(posted.begin(), posted.end(),
                              [&](const Posted& p) { return p.source == rank_ && p.tag == tag; });
    if(match != posted.end()) {
      if(match->size == bytes.size() && !bytes.empty())
        std::memcpy(match->into, bytes.data(), bytes.size());
      *match->filled = bytes.size();
      *taken = true;
      posted.erase(match);
    } else {
      s.mailbox(channel, dest).push_back(Envelope{rank_, tag, std::move(bytes), taken});
    }
  }
  s.changed.notify_all();
  PendingSend p;
  p.state = taken;
  return p;
}

void InProcessTransport::finishSendImpl(PendingSend& p, double timeoutSeconds, const std::string& what) {
  auto& s = *network_.shared_;
  auto taken = std::static_pointer_cast<bool>(p.state);
  std::unique_lock<std::mutex> lock(s.mutex);
  if(!s.wait(lock, rank_, timeoutSeconds, [&] { return *taken; })) {
    lock.unlock();
    abort(noDelivery(what, p.dest, timeoutSeconds));
  }
}

// A posted receive takes the earliest matching message already here, or else waits, posted, for
// the next one sent (startSendImpl fills it): a send to a posted receive completes at once.
void InProcessTransport::startRecvImpl(PendingRecv& r) {
  auto& s = *network_.shared_;
  auto filled = std::make_shared<size_t>(0);
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    std::deque<Envelope>& box = s.mailbox(r.channel, rank_);
    auto found = std::find_if(box.begin(), box.end(),
                              [&](const Envelope& e) { return e.source == r.source && e.tag == r.tag; });
    if(found != box.end()) {
      if(found->bytes.size() == r.size && r.size)
        std::memcpy(r.into, found->bytes.data(), r.size);
      *filled = found->bytes.size();
      *found->taken = true;
      box.erase(found);
      done = true;
    } else {
      s.postedAt(r.channel, rank_).push_back(Posted{r.source, r.tag, r.into, r.size, filled});
    }
  }
  if(done)
    s.changed.notify_all();
  r.state = std::make_shared<std::pair<std::shared_ptr<size_t>, bool>>(filled, done);
}

void InProcessTransport::finishRecvImpl(PendingRecv& r, double timeoutSeconds, const std::string& what) {
  auto& s = *network_.shared_;
  auto state = std::static_pointer_cast<std::pair<std::shared_ptr<size_t>, bool>>(r.state);
  std::shared_ptr<size_t> filled = state->first;
  std::unique_lock<std::mutex> lock(s.mutex);
  std::deque<Posted>& posted = s.postedAt(r.channel, rank_);
  auto pending = [&] {
    return std::any_of(posted.begin(), posted.end(), [&](const Posted& p) { return p.filled == filled; });
  };
  if(!s.wait(lock, rank_, timeoutSeconds, [&] { return state->second || !pending(); })) {
    lock.unlock();
    abort(noAnswer(what, r.source, timeoutSeconds));
  }
  size_t size = *filled;
  lock.unlock();
  if(size != r.size)
    abort(format("rank {}: {} from rank {} is {} bytes, {} were expected", rank_, what, r.source, size, r.size));
}

Transport::Message InProcessTransport::recvImpl(Channel channel, int source, int tag, double timeoutSeconds,
                                                const std::string& what) {
  auto& s = *network_.shared_;
  std::unique_lock<std::mutex> lock(s.mutex);
  std::deque<Envelope>& box = s.mailbox(channel, rank_);
  auto matches = [&](const Envelope& e) {
    return (source < 0 || e.source == source) && (tag < 0 || e.tag == tag);
  };
  std::deque<Envelope>::iterator found;
  bool arrived = s.wait(lock, rank_, timeoutSeconds, [&] {
    found = std::find_if(box.begin(), box.end(), matches);
    return found != box.end();
  });
  if(!arrived) {
    lock.unlock();
    abort(noAnswer(what, source, timeoutSeconds));
  }
  Message m;
  m.source = found->source;
  m.tag = found->tag;
  m.bytes = std::move(found->bytes);
  *found->taken = true;
  box.erase(found);
  lock.unlock();
  s.changed.notify_all();
  return m;
}

std::shared_ptr<const InProcessTransport::Parts> InProcessTransport::collective(int group, std::vector<char> mine,
                                                                             double timeoutSeconds,
                                                                             const std::string& what,
                                                                             const Reduce& reduce) {
  auto& s = *network_.shared_;
  int P = size();
  std::unique_lock<std::mutex> lock(s.mutex);
  uint64_t call = s.calls[group][size_t(rank_)]++;
  Round& round = s.rounds[group][call];  // std::map: the reference survives other rounds' inserts
  if(!round.parts)
    round.parts = std::make_shared<Parts>(size_t(P));
  (*round.parts)[size_t(rank_)] = std::move(mine);
  if(++round.arrived == P) {
    if(reduce) {  // outside the lock: no rank touches the parts before `ready`, nor erases the round
      std::shared_ptr<Parts> parts = round.parts;
      lock.unlock();
      auto result = std::make_shared<Parts>(1);
      std::string error;
      try {
        (*result)[0] = reduce(*parts);
      } catch(const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      round.parts = result;
      round.error = error;
    }
    round.ready = true;
    s.changed.notify_all();
  }
  if(!s.wait(lock, rank_, timeoutSeconds, [&] { return round.ready; })) {
    lock.unlock();
    abort(notEveryRank(what, timeoutSeconds));
  }
  std::shared_ptr<const Parts> parts = round.parts;
  std::string error = round.error;
  if(++round.collected == P)
    s.rounds[group].erase(call);
  lock.unlock();
  ABORT_IF(!error.empty(), "{}", error);
  return parts;
}

// The sum is made once, in rank order, so that every rank gets the same floats (P ranks each
// summing every part cost P times the adds, and copying every part P times the memory: at 16
// ranks of a 30 MB gradient, most of an update).
void InProcessTransport::allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) {
  std::vector<char> mine(n * sizeof(float));
  if(n)
    std::memcpy(mine.data(), values, mine.size());
  auto sum = [&](Parts& parts) {
    for(size_t r = 0; r < parts.size(); ++r)
      ABORT_IF(parts[r].size() != parts[0].size(), "{}: rank {} summed {} values, rank 0 {}", what, r,
               parts[r].size() / sizeof(float), parts[0].size() / sizeof(float));
    std::vector<char> total = std::move(parts[0]);
    float* out = reinterpret_cast<float*>(total.data());
    size_t count = total.size() / sizeof(float);
    for(size_t r = 1; r < parts.size(); ++r) {
      const float* in = reinterpret_cast<const float*>(parts[r].data());
      for(size_t i = 0; i < count; ++i)
        out[i] += in[i];
    }
    return total;
  };
  std::shared_ptr<const Parts> total = collective(kCollectiveGroup, std::move(mine), timeoutSeconds, what, sum);
  if(n)
    std::memcpy(values, (*total)[0].data(), n * sizeof(float));
}

uint64_t InProcessTransport::broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) {
  std::vector<char> mine(sizeof(value));
  std::memcpy(mine.data(), &value, sizeof(value));
  std::shared_ptr<const Parts> parts = collective(kControlGroup, std::move(mine), timeoutSeconds, what);
  std::memcpy(&value, (*parts)[0].data(), sizeof(value));
  return value;
}

void InProcessTransport::barrier(double timeoutSeconds, const std::string& what) {
  collective(kControlGroup, {}, timeoutSeconds, what);
}

PeerView InProcessTransport::peerView() const {
  PeerView v;
  for(int r = 0; r < network_.size(); ++r)
    v.activity.push_back(network_.rank(r).activity());
  return v;
}

}  // namespace marian
