#pragma once
// defines: marian::InProcessNetwork, marian::InProcessTransport — P ranks as threads of one
// process, so that everything written against Transport runs without mpirun (the unit tests).
// Each (channel, destination) has a mailbox; a receive takes the earliest message in it that
// matches (source, tag), -1 matching any, as MPI matches. A send completes only when a receiver
// has taken its message (MPI may hold a large send that long): code that would deadlock under
// MPI without buffering deadlocks here too, and the bounded waits turn that into an error.
// Waits that run out stop the whole network, as MpiTransport stops the job: every rank's
// waiting call then throws an Error with the reason.
#include <functional>
#include <memory>
#include <vector>

#include "comm/transport.h"

namespace marian {

class InProcessNetwork;

// One rank's end of an InProcessNetwork; its calls must come from that rank's threads.
class InProcessTransport : public Transport {
public:
  int rank() const override { return rank_; }
  int size() const override;
  void allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) override;
  uint64_t broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) override;
  void barrier(double timeoutSeconds, const std::string& what) override;
  // Stops the network with `why` (the first reason stays) and throws it as an Error.
  [[noreturn]] void abort(const std::string& why) override;
  // every rank's activity as it is now; no round trips (no link to measure)
  PeerView peerView() const override;

protected:
  Message recvImpl(Channel channel, int source, int tag, double timeoutSeconds, const std::string& what) override;
  PendingSend startSendImpl(Channel channel, int dest, int tag, const void* data, size_t size) override;
  void finishSendImpl(PendingSend& send, double timeoutSeconds, const std::string& what) override;
  void startRecvImpl(PendingRecv& recv) override;
  void finishRecvImpl(PendingRecv& recv, double timeoutSeconds, const std::string& what) override;

private:
  friend class InProcessNetwork;
  InProcessTransport(InProcessNetwork& network, int rank) : network_(network), rank_(rank) {}
  using Parts = std::vector<std::vector<char>>;  // by rank
  using Reduce = std::function<std::vector<char>(Parts&)>;
  // This rank's next call of a collective on `group`: every rank's part, shared by the ranks (not
  // copied), or with `reduce` the one part it makes of them (it may take theirs: nothing reads
  // them after it), made once by the last rank to arrive.
  std::shared_ptr<const Parts> collective(int group, std::vector<char> mine, double timeoutSeconds,
                                          const std::string& what, const Reduce& reduce = nullptr);
  InProcessNetwork& network_;
  int rank_;
};

class InProcessNetwork {
public:
  explicit InProcessNetwork(int size);
  ~InProcessNetwork();
  int size() const { return int(ranks_.size()); }
  InProcessTransport& rank(int r) { return *ranks_.at(size_t(r)); }
  // Runs body(rank r's transport) on thread r, for every rank, and waits for all of them. A
  // rank whose body throws stops the network (the others would wait for it, as MPI ranks for a
  // failed one); then the error of the rank that stopped it first is rethrown here.
  void run(const std::function<void(Transport&)>& body);

private:
  friend class InProcessTransport;
  struct Shared;  // mailboxes, collectives and the stop, under one lock
  // Records the first reason and wakes every waiting rank.
  void stop(const std::string& why, int byRank);
  std::unique_ptr<Shared> shared_;
  std::vector<std::unique_ptr<InProcessTransport>> ranks_;
};

}  // namespace marian
