#include "comm/mpi_transport.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "common/error.h"
#include "common/logging.h"
#include "common/timeline.h"

namespace marian {

namespace {

std::unique_ptr<MpiTransport>& theInstance() {
  static std::unique_ptr<MpiTransport> instance;
  return instance;
}

MPI_Comm& comm(void* p) { return *static_cast<MPI_Comm*>(p); }

void check(int rc, const char* what) {
  if(rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    ABORT("MPI error in {}: {}", what, std::string(msg, size_t(len)));
  }
}

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Polls `ready` until it returns true: a few quick retries, then sleeps growing to maxSleepUs.
// About once a second it asks judge(elapsed seconds) whether to go on; a reason it returns stops
// the job.
template <class Ready, class Judge>
void waitUntil(Ready ready, Judge judge, MpiTransport& t, int maxSleepUs = 1000) {
  auto start = std::chrono::steady_clock::now();
  double nextJudgement = 1;
  int polls = 0;
  while(!ready()) {
    ++polls;
    if(polls > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(maxSleepUs, 10 * (polls - 64))));
    if(polls % 64 != 0)
      continue;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if(elapsed < nextJudgement)
      continue;
    nextJudgement = elapsed + 1;
    std::string reason = judge(elapsed);
    if(!reason.empty())
      t.abort(reason);
  }
}

// A transfer under way moves only while MPI is called (OpenMPI's TCP transport fills the socket
// in its progress calls): waits for sends poll often enough to keep a 1 Gbit/s link busy.
constexpr int kTransferPollUs = 20;

std::atomic<size_t> countLimitBytes{size_t(INT32_MAX)};

// How a message of `size` bytes goes through MPI: `count` of `type`. Past the count limit, one
// element of a datatype of whole blocks and the rest, built alike by the sender and the receiver
// (the receiver learns the size from MPI_Get_elements_x, which counts bytes as a long integer).
// The type is freed at once: MPI keeps it for the transfers that use it.
struct MessageType {
  MPI_Datatype type = MPI_BYTE;
  int count = 0;

  explicit MessageType(size_t size) {
    size_t block = countLimitBytes.load();
    if(size <= block) {
      count = int(size);
      return;
    }
    size_t blocks = size / block, rest = size % block;
    ABORT_IF(blocks > size_t(INT32_MAX), "Message of {} bytes exceeds MPI's count limit", size);
    MPI_Datatype chunk, body;
    check(MPI_Type_contiguous(int(block), MPI_BYTE, &chunk), "MPI_Type_contiguous");
    check(MPI_Type_contiguous(int(blocks), chunk, &body), "MPI_Type_contiguous");
    MPI_Type_free(&chunk);
    type = body;
    if(rest) {
      int lengths[2] = {1, int(rest)};
      MPI_Aint at[2] = {0, MPI_Aint(blocks * block)};
      MPI_Datatype parts[2] = {body, MPI_BYTE};
      check(MPI_Type_create_struct(2, lengths, at, parts, &type), "MPI_Type_create_struct");
      MPI_Type_free(&body);
    }
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    count = 1;
  }
  ~MessageType() { if(type != MPI_BYTE) MPI_Type_free(&type); }
  MessageType(const MessageType&) = delete;
  MessageType& operator=(const MessageType&) = delete;
};

// The bytes a probed or received message holds.
size_t bytesIn(const MPI_Status& status) {
  MPI_Count count = 0;
  MPI_Get_elements_x(&status, MPI_BYTE, &count);
  return count == MPI_UNDEFINED ? 0 : size_t(count);
}

// A rank heard from within the timeout but silent on what is awaited this many timeouts (and at
// least kAliveButSilentSeconds) is given up on too: no wait is unbounded.
constexpr double kAliveButSilentFactor = 10, kAliveButSilentSeconds = 3600;

// The judge of one wait on `peer` (-1: every rank): reports the wait at half the timeout and
// after every further timeout; past the timeout stops the job when the peer went silent (or
// stayed silent on this wait too long), or, without heartbeats, with late() as the reason
// (worded only when needed, not for every message).
template <class Late>
auto judgeOf(MpiTransport& t, double timeoutSeconds, int peer, const std::string& what, Late late) {
  return [&t, timeoutSeconds, peer, &what, late, nextReport = timeoutSeconds / 2](double elapsed) mutable {
    if(timeoutSeconds <= 0)
      return std::string();
    if(elapsed >= nextReport) {
      nextReport += timeoutSeconds;
      LOG(warn, "rank {}: waiting {} s so far for {} from {}{}", t.rank(), formatNumber("%.0f", elapsed), what,
          peer < 0 ? std::string("every rank") : "rank " + std::to_string(peer), t.waitDetail(peer));
    }
    if(elapsed <= timeoutSeconds)
      return std::string();
    return t.heartbeating() ? t.giveUp(elapsed, timeoutSeconds, peer, what) : late();
  };
}

// Waits for a non-blocking operation (its status into `status` when given), judged by `judge`.
template <class Judge>
void waitFor(MPI_Request& request, MpiTransport& t, Judge judge, int maxSleepUs = 1000,
             MPI_Status* status = MPI_STATUS_IGNORE) {
  int done = 0;
  waitUntil([&] {
    check(MPI_Test(&request, &done, status), "MPI_Test");  // a longer message: MPI_ERR_TRUNCATE
    return done != 0;
  }, judge, t, maxSleepUs);
}

}  // namespace

MpiTransport& MpiTransport::start(int* argc, char*** argv, double startTimeoutSeconds) {
  auto& instance = theInstance();
  if(instance)
    return *instance;
  int provided = 0;
  std::atomic<bool> started{false};
  std::thread watchdog([&] {
    double deadline = steadySeconds() + startTimeoutSeconds;
    while(!started && steadySeconds() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if(!started) {  // MPI cannot be aborted before it started: end this process, mpirun the rest
      std::fprintf(stderr,
                   "Error: MPI start-up did not finish within %.0f s (--multi-node-timeout): a rank of the job did "
                   "not start (stopped, or its host unreachable); stopping\n",
                   startTimeoutSeconds);
      std::fflush(stderr);
      std::_Exit(1);
    }
  });
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  started = true;
  watchdog.join();
  check(rc, "MPI_Init_thread");
  if(provided < MPI_THREAD_MULTIPLE) {
    const char* names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED"};
    std::fprintf(stderr,
                 "Error: --multi-node needs an MPI library with MPI_THREAD_MULTIPLE, but this one "
                 "provides only %s (OpenMPI: build with --enable-mpi-thread-multiple)\n",
                 provided >= 0 && provided < 3 ? names[provided] : "less");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  instance.reset(new MpiTransport());
  MpiTransport& t = *instance;
  MPI_Comm_rank(MPI_COMM_WORLD, &t.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &t.size_);
  for(void*& c : t.comms_) {  // one communicator per channel: their messages never mix
    c = new MPI_Comm;
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm(c)), "MPI_Comm_dup");
  }
  t.control_ = new MPI_Comm;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm(t.control_)), "MPI_Comm_dup");
  t.liveness_ = new MPI_Comm;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm(t.liveness_)), "MPI_Comm_dup");
  t.lastHeard_.reset(new std::atomic<double>[size_t(t.size_)]);
  return t;
}

void MpiTransport::setPeerTimeout(double seconds) {
  Transport::setPeerTimeout(seconds);
  if(heartbeatThread_.joinable() || size_ < 2 || seconds <= 0)
    return;
  for(int r = 0; r < size_; ++r)
    lastHeard_[size_t(r)] = steadySeconds();
  {
    std::lock_guard<std::mutex> lock(peersMutex_);
    size_t p = size_t(size_);
    peerActivity_.assign(p, RankActivity());
    roundTrips_.assign(p, std::vector<float>(p, -1.f));
    recentRoundTrips_.assign(p, {});
    fastestRoundTrips_.assign(p, -1.f);
  }
  heartbeatThread_ = std::thread([this] { heartbeats(); });
}

namespace {

// A heartbeat's head; a ping to rank 0 (which judges) is followed by the sender's round trips to
// every rank (floats, ms).
struct BeatHead {
  double sentAt;  // the pinging rank's clock, sent back in the echo
  RankActivity activity;
};
constexpr int kPingTag = 0, kEchoTag = 1;
constexpr size_t kRoundTripSamples = 5;  // the recent mean of a link's round trips: over the last 5 s or so

}  // namespace

// A few pings per timeout to every peer (at least one a second, for the round trips), every
// heartbeat that came in noted and every ping echoed. A send still pending (the peer is not
// reading) is not repeated.
void MpiTransport::heartbeats() {
  MPI_Comm c = comm(liveness_);
  size_t p = size_t(size_);
  std::vector<MPI_Request> pings(p, MPI_REQUEST_NULL), echoes(p, MPI_REQUEST_NULL);
  pingBytes_.assign(p, {});
  echoBytes_.assign(p, {});
  double interval = std::clamp(peerTimeout() / 4, 0.05, 1.0), next = 0;
  std::vector<char> in;
  while(!stopHeartbeats_) {
    if(steadySeconds() >= next) {
      next = steadySeconds() + interval;
      std::vector<float> row;
      {
        std::lock_guard<std::mutex> lock(peersMutex_);
        row = roundTrips_[size_t(rank_)];
      }
      for(size_t r = 0; r < p; ++r) {
        int done = 1;
        if(int(r) == rank_)
          continue;
        if(pings[r] != MPI_REQUEST_NULL)
          MPI_Test(&pings[r], &done, MPI_STATUS_IGNORE);
        if(!done)
          continue;
        BeatHead head{steadySeconds(), activity()};
        std::vector<char>& ping = pingBytes_[r];
        ping.resize(sizeof head + (r == 0 ? p * sizeof(float) : 0));
        std::memcpy(ping.data(), &head, sizeof head);
        if(r == 0)
          std::memcpy(ping.data() + sizeof head, row.data(), p * sizeof(float));
        MPI_Isend(ping.data(), int(ping.size()), MPI_BYTE, int(r), kPingTag, c, &pings[r]);
      }
    }
    for(;;) {
      int found = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &found, &status);
      if(!found)
        break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      in.resize(size_t(count));
      MPI_Recv(in.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, c, MPI_STATUS_IGNORE);
      size_t from = size_t(status.MPI_SOURCE);
      lastHeard_[from] = steadySeconds();
      if(!noteBeat(status.MPI_SOURCE, status.MPI_TAG, in))
        continue;
      int done = 1;
      if(echoes[from] != MPI_REQUEST_NULL)
        MPI_Test(&echoes[from], &done, MPI_STATUS_IGNORE);
      if(!done)  // the last echo has not left yet: this ping goes unanswered
        continue;
      echoBytes_[from].assign(in.begin(), in.begin() + sizeof(BeatHead));
      MPI_Isend(echoBytes_[from].data(), int(sizeof(BeatHead)), MPI_BYTE, status.MPI_SOURCE, kEchoTag, c,
                &echoes[from]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for(auto* requests : {&pings, &echoes})
    for(MPI_Request& r : *requests)
      if(r != MPI_REQUEST_NULL)
        MPI_Request_free(&r);  // completes in the background; the peer may be gone
}

bool MpiTransport::noteBeat(int source, int tag, const std::vector<char>& beat) {
  size_t p = size_t(size_), from = size_t(source);
  if(beat.size() < sizeof(BeatHead))
    return false;
  BeatHead head;
  std::memcpy(&head, beat.data(), sizeof head);
  if(tag == kEchoTag) {
    float ms = float(1000 * (steadySeconds() - head.sentAt));
    {
      std::lock_guard<std::mutex> lock(peersMutex_);
      std::vector<float>& recent = recentRoundTrips_[from];
      recent.push_back(ms);
      if(recent.size() > kRoundTripSamples)
        recent.erase(recent.begin());
      float sum = 0;
      for(float x : recent)
        sum += x;
      roundTrips_[size_t(rank_)][from] = sum / float(recent.size());
      float& fastest = fastestRoundTrips_[from];
      fastest = fastest < 0 ? ms : std::min(fastest, ms);
    }
    if(timeline::enabled())
      timeline::counter("round trip to rank " + std::to_string(source) + " (ms)", ms);
    return false;
  }
  std::lock_guard<std::mutex> lock(peersMutex_);
  peerActivity_[from] = head.activity;
  if(beat.size() == sizeof head + p * sizeof(float))
    std::memcpy(roundTrips_[from].data(), beat.data() + sizeof head, p * sizeof(float));
  return true;
}

PeerView MpiTransport::peerView() const {
  PeerView v;
  {
    std::lock_guard<std::mutex> lock(peersMutex_);
    v.activity = peerActivity_;
    v.roundTripMs = roundTrips_;
    v.fastestRoundTripMs = fastestRoundTrips_;
  }
  if(!v.activity.empty())
    v.activity[size_t(rank_)] = activity();
  return v;
}

std::pair<double, int> MpiTransport::silence(int peer) const {
  double now = steadySeconds();
  if(peer >= 0)
    return {now - lastHeard_[size_t(peer)], peer};
  std::pair<double, int> most{0, -1};
  for(int r = 0; r < size_; ++r)
    if(r != rank_ && now - lastHeard_[size_t(r)] >= most.first)
      most = {now - lastHeard_[size_t(r)], r};
  return most;
}

std::string MpiTransport::waitDetail(int peer) const {
  if(!heartbeating())
    return "";
  auto [seconds, who] = silence(peer);
  return format(" (rank {} last heard from {} s ago)", who, formatNumber("%.1f", seconds));
}

std::string MpiTransport::giveUp(double elapsed, double timeoutSeconds, int peer, const std::string& what) const {
  auto [seconds, who] = silence(peer);
  if(seconds > timeoutSeconds)
    return format("rank {}: rank {} has been silent for {} s (stopped, dead or unreachable) while this rank waited "
                  "{} s for {} (--multi-node-timeout {}); stopping the job",
                  rank_, who, formatNumber("%.0f", seconds), formatNumber("%.0f", elapsed), what, timeoutSeconds);
  if(elapsed > std::max(kAliveButSilentFactor * timeoutSeconds, kAliveButSilentSeconds))
    return format("rank {}: {} is alive but has not taken part in {} for {} s; stopping the job", rank_,
                  peer < 0 ? std::string("a rank") : "rank " + std::to_string(peer), what,
                  formatNumber("%.0f", elapsed));
  return "";
}

MpiTransport* MpiTransport::instance() { return theInstance().get(); }

void MpiTransport::setCountLimit(size_t bytes) {
  ABORT_IF(bytes == 0 || bytes > size_t(INT32_MAX), "MPI's count limit must be 1 to {} bytes, not {}", INT32_MAX,
           bytes);
  countLimitBytes = bytes;
}

size_t MpiTransport::countLimit() { return countLimitBytes.load(); }

MpiTransport::~MpiTransport() {
  // Every rank meets here first, heartbeats still running: a rank stopped at the end of the job
  // is named within the timeout instead of holding the others in MPI_Finalize, which has none.
  if(heartbeating())
    barrier(peerTimeout(), "the end of the job");
  stopHeartbeats_ = true;
  if(heartbeatThread_.joinable())
    heartbeatThread_.join();
  std::atomic<bool> finalized{false};
  double timeout = peerTimeout();
  std::thread watchdog([&] {
    double deadline = steadySeconds() + timeout;
    while(!finalized && steadySeconds() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if(!finalized) {  // everything is saved: leave without MPI's shutdown
      std::fprintf(stderr, "Warning: rank %d: MPI_Finalize did not finish within %.0f s; exiting without it\n",
                   rank_, timeout);
      std::fflush(stderr);
      std::_Exit(1);
    }
  });
  if(liveness_) {
    MPI_Comm_free(&comm(liveness_));
    delete static_cast<MPI_Comm*>(liveness_);
  }
  for(void* c : comms_) {
    MPI_Comm_free(&comm(c));
    delete static_cast<MPI_Comm*>(c);
  }
  MPI_Comm_free(&comm(control_));
  delete static_cast<MPI_Comm*>(control_);
  MPI_Finalize();
  finalized = true;
  watchdog.join();
}

Transport::Message MpiTransport::recvImpl(Channel channel, int source, int tag, double timeoutSeconds,
                                          const std::string& what) {
  MPI_Comm c = comm(comms_[int(channel)]);
  MPI_Status status;
  int found = 0;
  waitUntil([&] {
    MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, tag < 0 ? MPI_ANY_TAG : tag, c, &found, &status);
    return found != 0;
  }, judgeOf(*this, timeoutSeconds, source, what, [&] { return noAnswer(what, source, timeoutSeconds); }), *this);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(bytesIn(status));
  MessageType as(m.bytes.size());
  check(MPI_Recv(m.bytes.data(), as.count, as.type, m.source, m.tag, c, MPI_STATUS_IGNORE), "MPI_Recv");
  return m;
}

Transport::PendingSend MpiTransport::startSendImpl(Channel channel, int dest, int tag, const void* data,
                                                   size_t size) {
  auto request = std::make_shared<MPI_Request>();
  MessageType as(size);
  check(MPI_Isend(data, as.count, as.type, dest, tag, comm(comms_[int(channel)]), request.get()), "MPI_Isend");
  PendingSend p;
  p.state = request;
  return p;
}

void MpiTransport::finishSendImpl(PendingSend& p, double timeoutSeconds, const std::string& what) {
  waitFor(*std::static_pointer_cast<MPI_Request>(p.state), *this,
          judgeOf(*this, timeoutSeconds, p.dest, what, [&] { return noDelivery(what, p.dest, timeoutSeconds); }),
          kTransferPollUs);
}

void MpiTransport::startRecvImpl(PendingRecv& r) {
  auto request = std::make_shared<MPI_Request>();
  MessageType as(r.size);
  check(MPI_Irecv(r.into, as.count, as.type, r.source, r.tag, comm(comms_[int(r.channel)]), request.get()),
        "MPI_Irecv");
  r.state = request;
}

void MpiTransport::finishRecvImpl(PendingRecv& r, double timeoutSeconds, const std::string& what) {
  MPI_Status status;
  waitFor(*std::static_pointer_cast<MPI_Request>(r.state), *this,
          judgeOf(*this, timeoutSeconds, r.source, what, [&] { return noAnswer(what, r.source, timeoutSeconds); }),
          kTransferPollUs, &status);
  size_t got = bytesIn(status);
  if(got != r.size)
    abort(format("rank {}: {} from rank {} is {} bytes, {} were expected", rank_, what, r.source, got, r.size));
}

void MpiTransport::allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) {
  ABORT_IF(n > size_t(INT32_MAX), "Allreduce of {} values exceeds MPI's count limit", n);
  MPI_Request request;
  check(MPI_Iallreduce(MPI_IN_PLACE, values, int(n), MPI_FLOAT, MPI_SUM, comm(comms_[int(Channel::collective)]),
                       &request),
        "MPI_Iallreduce");
  waitFor(request, *this, judgeOf(*this, timeoutSeconds, -1, what, [&] { return notEveryRank(what, timeoutSeconds); }),
          kTransferPollUs);
}

uint64_t MpiTransport::broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) {
  MPI_Request request;
  check(MPI_Ibcast(&value, 1, MPI_UINT64_T, 0, comm(control_), &request), "MPI_Ibcast");
  waitFor(request, *this, judgeOf(*this, timeoutSeconds, -1, what, [&] { return notEveryRank(what, timeoutSeconds); }));
  return value;
}

void MpiTransport::barrier(double timeoutSeconds, const std::string& what) {
  MPI_Request request;
  check(MPI_Ibarrier(comm(control_), &request), "MPI_Ibarrier");
  waitFor(request, *this, judgeOf(*this, timeoutSeconds, -1, what, [&] { return notEveryRank(what, timeoutSeconds); }));
}

void MpiTransport::abort(const std::string& why) {
  std::fprintf(stderr, "Error: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace marian
