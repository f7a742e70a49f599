#pragma once
// defines: marian::MpiTransport — the Transport of the programs, and the one place that calls
// MPI: initialisation with MPI_THREAD_MULTIPLE (several client threads and a server thread per
// rank call MPI at once), one communicator per channel, bounded waits and abort. Waiting polls
// with MPI_Iprobe/MPI_Test and sleeps between polls, so an idle rank does not burn a core
// (OpenMPI's blocking calls busy-poll, which on small machines starves compute).
// Once the job's timeout is set, a liveness thread sends every peer a heartbeat a few times per
// timeout: a wait past the timeout ends the job only when the awaited rank has gone silent
// (stopped, dead, unreachable), so a rank busy validating or saving is waited for (up to
// kAliveButSilentFactor timeouts, at least an hour); a wait reports itself while it lasts. The
// heartbeats are pings that the peer echoes: each ping carries the sender's activity, and a ping
// to rank 0 its recent round trips, so that rank 0 knows every rank's pace and every link's
// (peerView).
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/transport.h"

namespace marian {

class MpiTransport : public Transport {
public:
  // Starts MPI once per process (the programs' entry points); a library without
  // MPI_THREAD_MULTIPLE is an error that says so. Library code takes a Transport& instead.
  // A rank that never starts (stopped, or its host gone) would hold the others in MPI_Init:
  // start-up longer than startTimeoutSeconds ends this process, naming the cause.
  static MpiTransport& start(int* argc, char*** argv, double startTimeoutSeconds = kCollectiveTimeoutSeconds);
  // The started transport, or null when the process runs without MPI.
  static MpiTransport* instance();
  ~MpiTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // MPI_Allreduce (sum), polling.
  void allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) override;
  uint64_t broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) override;
  void barrier(double timeoutSeconds, const std::string& what) override;
  // Prints `why` and ends every process of the job (MPI_Abort).
  [[noreturn]] void abort(const std::string& why) override;
  // Sets the job's timeout and starts the heartbeats that tell a silent rank from a busy one.
  void setPeerTimeout(double seconds) override;
  PeerView peerView() const override;

  // MPI's counts are ints: a message of more bytes than this (INT32_MAX; tests lower it) travels
  // as one element of a datatype of as many bytes, blocks of this size and the rest.
  static void setCountLimit(size_t bytes);
  static size_t countLimit();

  // For the waits: whether heartbeats run; ", last heard from N s ago" of `peer` (-1: the most
  // silent rank); why a wait of `elapsed` s past the timeout must stop the job ("": wait on).
  bool heartbeating() const { return heartbeatThread_.joinable(); }
  std::string waitDetail(int peer) const;
  std::string giveUp(double elapsed, double timeoutSeconds, int peer, const std::string& what) const;

protected:
  Message recvImpl(Channel channel, int source, int tag, double timeoutSeconds, const std::string& what) override;
  PendingSend startSendImpl(Channel channel, int dest, int tag, const void* data, size_t size) override;
  void finishSendImpl(PendingSend& send, double timeoutSeconds, const std::string& what) override;
  void startRecvImpl(PendingRecv& recv) override;
  void finishRecvImpl(PendingRecv& recv, double timeoutSeconds, const std::string& what) override;

private:
  MpiTransport() = default;
  void heartbeats();
  // Notes a heartbeat from `source`: the echo of this rank's ping (a round trip), or a ping
  // (the peer's activity and round trips; true: to be echoed).
  bool noteBeat(int source, int tag, const std::vector<char>& beat);
  // seconds since the last heartbeat of `peer`, and the rank; -1: the most silent rank
  std::pair<double, int> silence(int peer) const;
  int rank_ = 0, size_ = 1;
  void* comms_[kChannels] = {};  // MPI_Comm per channel (opaque here)
  void* control_ = nullptr;                               // broadcast and barrier
  void* liveness_ = nullptr;                              // heartbeats
  std::unique_ptr<std::atomic<double>[]> lastHeard_;      // per rank, seconds on a steady clock
  std::atomic<bool> stopHeartbeats_{false};
  std::thread heartbeatThread_;
  mutable std::mutex peersMutex_;               // what the heartbeats bring, below
  std::vector<RankActivity> peerActivity_;       // per rank, from its last ping
  std::vector<std::vector<float>> roundTrips_;   // [i][j]: rank i's recent mean round trip to j (ms), -1 unknown
  std::vector<std::vector<float>> recentRoundTrips_;  // this rank's last samples per peer (ms)
  std::vector<float> fastestRoundTrips_;         // this rank's fastest per peer (ms), -1 unknown
  // the heartbeats' send buffers: a freed request may still be read until MPI_Finalize
  std::vector<std::vector<char>> pingBytes_, echoBytes_;
};

}  // namespace marian
