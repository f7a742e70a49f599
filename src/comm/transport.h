#pragma once
// defines: marian::Transport — what the communication code needs of the ranks it runs on:
// point-to-point messages on separate channels, matched by (source, tag); bounded waits that
// stop the whole job naming the peer; a few collectives; and the payload bytes of every message
// counted per channel, once, here; and each rank's pace (RankActivity) as the others learn it
// (peerView). MpiTransport runs the ranks as MPI processes (the programs),
// InProcessTransport as threads of one process (the tests). Library classes take a Transport&
// from their caller and never look for a global one.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/peer_view.h"

namespace marian {

// Messages of different channels never match each other, so the parameter server's pushes and
// replies and the steps of a collective can share ranks without mixing. `outer` carries the
// exchanges of local steps (OuterRounds), which may run on a thread of their own while the
// training thread's collectives (a checkpoint's gather, the ranks' means) use `collective`.
// How long a wait on another rank lasts before it ends the job, until the program sets the job's
// own (--multi-node-timeout) with setPeerTimeout: every collective step (an allreduce round, a
// broadcast of the seed or of the decision to stop, a checkpoint's gather) waits this long.
constexpr double kCollectiveTimeoutSeconds = 600;

enum class Channel { toServer = 0, toClient = 1, collective = 2, outer = 3 };
constexpr int kChannels = 4;

// The integers a float holds exactly: counts summed by allreduceSum stay below it.
constexpr uint64_t kExactInFloat = uint64_t(1) << 24;

struct ChannelBytes {
  uint64_t sent = 0, received = 0;
};

// The point-to-point calls check and count here; the implementations move the bytes (*Impl).
class Transport {
public:
  struct Message {
    int source = -1, tag = -1;
    std::vector<char> bytes;
  };
  // A send under way, between startSend and finishSend; `state` belongs to the implementation.
  struct PendingSend {
    std::shared_ptr<void> state;
    Channel channel = Channel::collective;
    int dest = -1;
    size_t size = 0;
  };
  // A receive posted before its message comes, between startRecv and finishRecv.
  struct PendingRecv {
    std::shared_ptr<void> state;
    Channel channel = Channel::collective;
    int source = -1, tag = -1;
    void* into = nullptr;
    size_t size = 0;
  };

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The one timeout of every wait on another rank in this job, in every mode.
  double peerTimeout() const { return peerTimeout_; }
  virtual void setPeerTimeout(double seconds) { peerTimeout_ = seconds; }

  // Completes when the transport is done with the buffer; a peer that takes no delivery within
  // timeoutSeconds (0: forever) stops the job (large messages need the receiver's help).
  void send(Channel channel, int dest, int tag, const std::vector<char>& bytes, double timeoutSeconds = 0);
  // The next message on `channel` from `source` with `tag` (-1: any), the earliest that arrived
  // of those that match. Waits at most timeoutSeconds (0: forever), then stops the whole job
  // naming `what` and the peer.
  Message recv(Channel channel, int source, int tag, double timeoutSeconds, const std::string& what);
  // Sends to `dest` and receives from `source` at once (both with `tag`): the step of ring and
  // butterfly collectives, where every rank sends first and would otherwise wait on the other.
  Message exchange(Channel channel, int dest, int source, int tag, const std::vector<char>& bytes,
                   double timeoutSeconds, const std::string& what);
  // A send that runs while the caller does other work (a pipelined tree sends to two children
  // and receives the next chunk at once); `bytes` must stay alive until finishSend.
  PendingSend startSend(Channel channel, int dest, int tag, const std::vector<char>& bytes);
  // The same from `size` bytes at `data` (no copy), unchanged until finishSend.
  PendingSend startSend(Channel channel, int dest, int tag, const void* data, size_t size);
  void finishSend(PendingSend& send, double timeoutSeconds, const std::string& what);
  // A receive of exactly `size` bytes from `source` with `tag` into `into`, posted now: MPI
  // moves a large message as soon as it comes instead of when the receiver asks for it, and
  // several posted receives keep a link busy while the caller works on what arrived. Receives
  // of one (source, tag) take its messages in the order they were posted and sent; finishRecv
  // waits (at most timeoutSeconds), and a message of another size is an error.
  PendingRecv startRecv(Channel channel, int source, int tag, void* into, size_t size);
  void finishRecv(PendingRecv& recv, double timeoutSeconds, const std::string& what);
  // The sum of n floats over all ranks, in place (the collective channel's own communicator):
  // counts below kExactInFloat sum exactly, so to the same value on every rank.
  // This and the two below count nothing (see bytes), so the implementations define them.
  virtual void allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) = 0;
  // Rank 0's value on every rank (a seed drawn at random must be the same everywhere).
  virtual uint64_t broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) = 0;
  // Waits for all ranks; stops the job after timeoutSeconds (0: forever).
  virtual void barrier(double timeoutSeconds, const std::string& what) = 0;
  // Ends every rank of the job with `why` (MPI: the processes; in process: every rank's waits).
  [[noreturn]] virtual void abort(const std::string& why) = 0;

  // Payload bytes this rank sent (counted once delivered) and received on `channel` by
  // send, recv, exchange and startSend/finishSend, since the start. allreduceSum, broadcast and
  // barrier are not counted: MPI runs them with messages of its own that no caller can see.
  ChannelBytes bytes(Channel channel) const;

  // A step of this rank (a graph group's update or a device's push): its own work and its wait
  // for the exchange, in seconds; any thread.
  void noteStep(double computeSeconds, double waitSeconds);
  // A wait for the other ranks outside a step (the ranks' agreement to stop), in seconds.
  void noteWait(double waitSeconds);
  // Runs a collective outside a step; its time counts as this rank's wait for the others (a slow
  // rank keeps them there, which SlowRankJudge reads).
  template <class Collective>
  void waitingForRanks(Collective&& collective) {
    auto begin = std::chrono::steady_clock::now();
    collective();
    noteWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  RankActivity activity() const;
  // Every rank's activity and the round trips as this rank knows them (MpiTransport: from the
  // heartbeats, once the timeout is set; in process: every rank's own), for SlowRankJudge.
  virtual PeerView peerView() const = 0;

protected:
  virtual Message recvImpl(Channel channel, int source, int tag, double timeoutSeconds,
                           const std::string& what) = 0;
  // fills `state` only
  virtual PendingSend startSendImpl(Channel channel, int dest, int tag, const void* data, size_t size) = 0;
  virtual void finishSendImpl(PendingSend& send, double timeoutSeconds, const std::string& what) = 0;
  // startRecvImpl fills recv.state; finishRecvImpl leaves exactly recv.size bytes in recv.into
  virtual void startRecvImpl(PendingRecv& recv) = 0;
  virtual void finishRecvImpl(PendingRecv& recv, double timeoutSeconds, const std::string& what) = 0;

  // Why a bounded wait gave up, worded alike by every implementation.
  std::string noAnswer(const std::string& what, int source, double timeoutSeconds) const;
  std::string noDelivery(const std::string& what, int dest, double timeoutSeconds) const;
  std::string notEveryRank(const std::string& what, double timeoutSeconds) const;

private:
  std::atomic<uint64_t> sent_[kChannels] = {}, received_[kChannels] = {};
  mutable std::mutex activityMutex_;
  RankActivity activity_;
  double peerTimeout_ = kCollectiveTimeoutSeconds;
};

}  // namespace marian
