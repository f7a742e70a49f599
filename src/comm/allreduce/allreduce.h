#pragma once
// defines: marian::Allreduce — the sum over all ranks of a vector of dimension n, given as sparse
// (index, value) pairs or dense, by one of several algorithms (seeds 000-003), with the bytes
// each rank sent and received counted on the wire. createAllreduce names them as users pass them.
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_transport.h"
#include "comm/sparse_vector.h"

namespace marian {

struct AllreduceBytes {
  uint64_t sent = 0, received = 0;
};

// The sum as the algorithm left it: sparse pairs (ascending indices) or n dense values.
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

// Tuning of the schemes that keep state between calls (oktopk; seed 002's tau and tau').
struct AllreduceSettings {
  int repartitionEvery = 64;  // tau: recompute oktopk's balanced region boundaries
  int thresholdEvery = 32;    // tau': recompute oktopk's exact global threshold
};

class Allreduce {
public:
  explicit Allreduce(MpiTransport& transport) : mpi_(transport) {}
  virtual ~Allreduce() = default;
  virtual std::string name() const = 0;
  // The sum over all ranks of every rank's `local` (indices ascending, < n). Global top-k
  // schemes keep the k largest-magnitude entries of it (k = 0: all); the others ignore k.
  // Collective: every rank calls it with the same n and k.
  virtual AllreduceResult sum(const SparseVector& local, size_t n, size_t k = 0) = 0;
  // The dense sum of dense vectors, in place. Dense algorithms reduce directly; sparse ones take
  // the non-zero entries.
  virtual void sumDense(std::vector<float>& values);
  // What this rank sent and received in the calls since the last take.
  AllreduceBytes takeBytes() {
    AllreduceBytes b = bytes_;
    bytes_ = AllreduceBytes();
    return b;
  }

protected:
  // point-to-point on the collective channel, counted; `round` keeps the steps apart
  void send(int dest, int round, const std::vector<char>& bytes);
  std::vector<char> recv(int source, int round);
  std::vector<char> exchange(int dest, int source, int round, const std::vector<char>& bytes);
  MpiTransport::PendingSend startSend(int dest, int round, const std::vector<char>& bytes);
  void finishSend(MpiTransport::PendingSend& send);
  // Every rank's `mine`, by rank, passed around the ring (P-1 steps, rounds firstRound...).
  std::vector<std::vector<char>> ringAllgather(std::vector<char> mine, int firstRound);
  // The split step of seed 000's SSAR_Split and seed 002's split-and-reduce: rank b owns
  // [starts[b], starts[b+1]); every rank sends each owner its pairs there, destinations rotated
  // (step s: to r+s, from r-s) so no owner is hit by all at once. Returns the sum of every
  // rank's pairs in my region, added in rank order.
  SparseVector splitAndReduce(const SparseVector& local, const std::vector<uint32_t>& starts, int firstRound);
  void checkIndices(const SparseVector& v, size_t n) const;
  MpiTransport& mpi_;
  AllreduceBytes bytes_;
};

// An unknown name is an error listing the known ones.
std::unique_ptr<Allreduce> createAllreduce(const std::string& name, MpiTransport& transport,
                                           const AllreduceSettings& settings = AllreduceSettings());
std::vector<std::string> allreduceNames();

// Helpers shared by the algorithms.
std::vector<char> packSparse(const SparseVector& v);
SparseVector unpackSparse(const std::vector<char>& bytes);
std::vector<char> packDense(const float* values, size_t n);
// a + b, both sorted by index; entries present in both are added (a's value first)
SparseVector mergeSparse(const SparseVector& a, const SparseVector& b);
// The pairs of v with index in [begin, end)
SparseVector slice(const SparseVector& v, uint32_t begin, uint32_t end);
// The k entries of v with the largest magnitude (ties: the lower index), in index order.
SparseVector largestK(const SparseVector& v, size_t k);
// Equal blocks of [0, n) for P owners: P+1 starts, the last = n.
std::vector<uint32_t> equalBlocks(size_t n, int P);

}  // namespace marian
