#pragma once
// defines: marian::Allreduce — the base of the algorithms that add a vector of dimension n over
// all ranks, given as sparse (index, value) pairs or dense (seeds 000-003), with the bytes each
// rank sent and received counted on the wire. The algorithms are listed in algorithms.h.
#include <memory>
#include <string>
#include <vector>

#include "comm/sparse_vector.h"
#include "comm/transport.h"

namespace marian {

// What one rank sent and received on the collective channel. counted = false: the transport did
// not see the algorithm's traffic (dense leaves it to MPI_Allreduce), and sent and received are
// no measurement.
struct AllreduceBytes {
  uint64_t sent = 0, received = 0;
  bool counted = true;
};

// What reduce returns: the sum over ranks, or only a selection of its entries (isSelection), as
// the algorithm left it: sparse pairs (ascending indices) or n dense values.
struct AllreduceResult {
  bool isDense = false;
  std::vector<float> dense;  // n values when isDense
  SparseVector sparse;       // otherwise
  // Global top-k schemes (gtopk, oktopk) return only the entries they selected of the sum; the
  // indices of `sparse` are the mask (seed 001's gMask) a caller needs for its residuals.
  bool isSelection = false;
  float threshold = 0;  // oktopk: the magnitude threshold the selection applied

  std::vector<float> toDense(size_t n) const;
  // out[i] += the sum's value at i, for every entry
  void addTo(float* out) const;
};

// Tuning: of the schemes that keep state between calls (oktopk; seed 002's tau and tau'), and the
// message size of the pipelined dense ones (ring, tree).
struct AllreduceSettings {
  int repartitionEvery = 64;  // tau: recompute oktopk's balanced region boundaries
  int thresholdEvery = 32;    // tau': recompute oktopk's exact global threshold
  // Under OpenMPI's TCP eager limit (64 KiB): a larger message waits for a rendezvous handshake,
  // and where a link carries data both ways (a tree's edges, a ring of 2) that round trip queues
  // behind the data: 1 MiB segments reached 31-44% of a simulated 1 Gbit/s link, 32 KiB 91-95%.
  size_t segmentBytes = 32 << 10;
};

class Allreduce {
public:
  explicit Allreduce(Transport& transport)
      : transport_(transport), taken_(transport.bytes(Channel::collective)) {}
  virtual ~Allreduce() = default;
  virtual std::string name() const = 0;
  // The sum over all ranks of every rank's `local` (indices ascending, < n), or, for the global
  // top-k schemes (gtopk, oktopk: result.isSelection), only the entries of it they select, about
  // the k of largest magnitude (k = 0: all, the whole sum); the others ignore k.
  // Collective: every rank calls it with the same n and k.
  virtual AllreduceResult reduce(const SparseVector& local, size_t n, size_t k = 0) = 0;
  // The dense sum of dense vectors, in place (always the whole sum). Dense algorithms reduce
  // directly; sparse ones take the non-zero entries.
  virtual void sumDense(std::vector<float>& values);
  // What this rank sent and received since the last take (or the construction), as the
  // transport counted it on its channel. A difference of the transport's totals: it holds this
  // algorithm's only where no other uses the channel meanwhile (on `collective`, one thread per
  // rank and one algorithm at a time; OuterRounds' fragments share `outer` and count the channel).
  AllreduceBytes takeBytes();
  // The calls so far whose messages the transport could not count (MPI's own collective).
  uint64_t callsNotCounted() const { return callsNotCounted_; }
  // The channel its point-to-point steps use (collective unless set, before the first call):
  // OuterRounds' exchanges run on `outer`, beside the training thread's collectives. An algorithm
  // that MPI's own collective runs (dense) stays on the collective communicator.
  void setChannel(Channel channel);

protected:
  // Whether the transport sees this algorithm's traffic (not when MPI's own collective runs it).
  virtual bool bytesCounted() const { return true; }
  uint64_t callsNotCounted_ = 0;  // an algorithm that MPI's own collective runs counts its calls
  // point-to-point on the collective channel; `round` keeps the steps apart
  void send(int dest, int round, const std::vector<char>& bytes);
  std::vector<char> recv(int source, int round);
  std::vector<char> exchange(int dest, int source, int round, const std::vector<char>& bytes);
  Transport::PendingSend startSend(int dest, int round, const std::vector<char>& bytes);
  void finishSend(Transport::PendingSend& send);
  // Every rank's `mine`, by rank, passed around the ring (P-1 steps, rounds firstRound...).
  std::vector<std::vector<char>> ringAllgather(std::vector<char> mine, int firstRound);
  // toRank[d] to rank d and fromSizes[s] bytes from rank s, for every other rank at once: every
  // receive posted first, the messages in segments under MPI's eager limit (no rendezvous round
  // trip a message), so the exchange waits about one latency where a ring's P-1 steps wait P-1
  // (on a wide-area link the whole of it). Returns what came, by rank (this rank's empty).
  std::vector<std::vector<char>> directExchange(const std::vector<const std::vector<char>*>& toRank,
                                                const std::vector<size_t>& fromSizes, int round);
  // The split step of seed 000's SSAR_Split and seed 002's split-and-reduce: rank b owns
  // [starts[b], starts[b+1]); every rank sends each owner its pairs there, destinations rotated
  // (step s: to r+s, from r-s) so no owner is hit by all at once. Returns the sum of every
  // rank's pairs in my region, added in rank order.
  SparseVector splitAndReduce(const SparseVector& local, const std::vector<uint32_t>& starts, int firstRound);
  void checkIndices(SparseView v, size_t n) const;
  void checkIndices(const SparseVector& v, size_t n) const { checkIndices(v.view(), n); }
  Transport& transport_;
  Channel channel_ = Channel::collective;

private:
  ChannelBytes taken_;  // the transport's totals at the last take
};

}  // namespace marian
