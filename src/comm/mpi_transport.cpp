#include "comm/mpi_transport.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "common/error.h"
#include "common/logging.h"

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

// Polls `ready` until it returns true: a few quick retries, then sleeps growing to maxSleepUs.
// Returns false when the deadline passes first.
template <class Ready>
bool waitUntil(Ready ready, double timeoutSeconds, int maxSleepUs = 1000) {
  auto start = std::chrono::steady_clock::now();
  int polls = 0;
  while(!ready()) {
    ++polls;
    if(polls > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(maxSleepUs, 10 * (polls - 64))));
    if(timeoutSeconds > 0 &&
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeoutSeconds)
      return false;
  }
  return true;
}

// A transfer under way moves only while MPI is called (OpenMPI's TCP transport fills the socket
// in its progress calls): waits for sends poll often enough to keep a 1 Gbit/s link busy.
constexpr int kTransferPollUs = 20;

// Waits for a non-blocking operation (its status into `status` when given); past the deadline
// the job stops with late() as the reason (a function: the message is worded only when needed,
// not for every message sent).
template <class Reason>
void waitFor(MPI_Request& request, double timeoutSeconds, MpiTransport& t, Reason late, int maxSleepUs = 1000,
             MPI_Status* status = MPI_STATUS_IGNORE) {
  int done = 0;
  bool ok = waitUntil([&] {
    check(MPI_Test(&request, &done, status), "MPI_Test");  // a longer message: MPI_ERR_TRUNCATE
    return done != 0;
  }, timeoutSeconds, maxSleepUs);
  if(!ok)
    t.abort(late());
}

}  // namespace

MpiTransport& MpiTransport::start(int* argc, char*** argv) {
  auto& instance = theInstance();
  if(instance)
    return *instance;
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
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
  return t;
}

MpiTransport* MpiTransport::instance() { return theInstance().get(); }

MpiTransport::~MpiTransport() {
  for(void* c : comms_) {
    MPI_Comm_free(&comm(c));
    delete static_cast<MPI_Comm*>(c);
  }
  MPI_Comm_free(&comm(control_));
  delete static_cast<MPI_Comm*>(control_);
  MPI_Finalize();
}

void MpiTransport::sendImpl(Channel channel, int dest, int tag, const std::vector<char>& bytes,
                            double timeoutSeconds) {
  PendingSend p = startSendImpl(channel, dest, tag, bytes.data(), bytes.size());
  p.dest = dest;
  finishSendImpl(p, timeoutSeconds, "a message");
}

Transport::Message MpiTransport::recvImpl(Channel channel, int source, int tag, double timeoutSeconds,
                                          const std::string& what) {
  MPI_Comm c = comm(comms_[int(channel)]);
  MPI_Status status;
  int found = 0;
  bool ok = waitUntil([&] {
    MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, tag < 0 ? MPI_ANY_TAG : tag, c, &found, &status);
    return found != 0;
  }, timeoutSeconds);
  if(!ok)
    abort(noAnswer(what, source, timeoutSeconds));
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(size_t(count));
  check(MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, m.tag, c, MPI_STATUS_IGNORE), "MPI_Recv");
  return m;
}

Transport::Message MpiTransport::exchangeImpl(Channel channel, int dest, int source, int tag,
                                              const std::vector<char>& bytes, double timeoutSeconds,
                                              const std::string& what) {
  PendingSend p = startSendImpl(channel, dest, tag, bytes.data(), bytes.size());
  p.dest = dest;
  Message m = recvImpl(channel, source, tag, timeoutSeconds, what);
  finishSendImpl(p, timeoutSeconds, what);
  return m;
}

Transport::PendingSend MpiTransport::startSendImpl(Channel channel, int dest, int tag, const void* data,
                                                   size_t size) {
  ABORT_IF(size > size_t(INT32_MAX), "Message of {} bytes exceeds MPI's count limit", size);
  auto request = std::make_shared<MPI_Request>();
  check(MPI_Isend(data, int(size), MPI_BYTE, dest, tag, comm(comms_[int(channel)]), request.get()), "MPI_Isend");
  PendingSend p;
  p.state = request;
  return p;
}

void MpiTransport::finishSendImpl(PendingSend& p, double timeoutSeconds, const std::string& what) {
  waitFor(*std::static_pointer_cast<MPI_Request>(p.state), timeoutSeconds, *this,
          [&] { return noDelivery(what, p.dest, timeoutSeconds); }, kTransferPollUs);
}

void MpiTransport::startRecvImpl(PendingRecv& r) {
  ABORT_IF(r.size > size_t(INT32_MAX), "Message of {} bytes exceeds MPI's count limit", r.size);
  auto request = std::make_shared<MPI_Request>();
  check(MPI_Irecv(r.into, int(r.size), MPI_BYTE, r.source, r.tag, comm(comms_[int(r.channel)]), request.get()),
        "MPI_Irecv");
  r.state = request;
}

void MpiTransport::finishRecvImpl(PendingRecv& r, double timeoutSeconds, const std::string& what) {
  MPI_Status status;
  waitFor(*std::static_pointer_cast<MPI_Request>(r.state), timeoutSeconds, *this,
          [&] { return noAnswer(what, r.source, timeoutSeconds); }, kTransferPollUs, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if(size_t(count) != r.size)
    abort(format("rank {}: {} from rank {} is {} bytes, {} were expected", rank_, what, r.source, count, r.size));
}

void MpiTransport::allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) {
  ABORT_IF(n > size_t(INT32_MAX), "Allreduce of {} values exceeds MPI's count limit", n);
  MPI_Request request;
  check(MPI_Iallreduce(MPI_IN_PLACE, values, int(n), MPI_FLOAT, MPI_SUM, comm(comms_[int(Channel::collective)]),
                       &request),
        "MPI_Iallreduce");
  waitFor(request, timeoutSeconds, *this, [&] { return notEveryRank(what, timeoutSeconds); }, kTransferPollUs);
}

uint64_t MpiTransport::broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) {
  MPI_Request request;
  check(MPI_Ibcast(&value, 1, MPI_UINT64_T, 0, comm(control_), &request), "MPI_Ibcast");
  waitFor(request, timeoutSeconds, *this, [&] { return notEveryRank(what, timeoutSeconds); });
  return value;
}

void MpiTransport::barrier(double timeoutSeconds, const std::string& what) {
  MPI_Request request;
  check(MPI_Ibarrier(comm(control_), &request), "MPI_Ibarrier");
  waitFor(request, timeoutSeconds, *this, [&] { return notEveryRank(what, timeoutSeconds); });
}

void MpiTransport::abort(const std::string& why) {
  std::fprintf(stderr, "Error: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace marian
