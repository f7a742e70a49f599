#pragma once
// defines: marian::Allreduce — the sum over all ranks of a vector of dimension n given as sparse
// (index, value) pairs, by one of several algorithms (seeds 000-003), with the bytes each rank
// sent and received counted on the wire. createAllreduce names them as users pass them.
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_transport.h"
#include "comm/sparse_vector.h"

namespace marian {

struct AllreduceBytes {
  uint64_t sent = 0, received = 0;
};

class Allreduce {
public:
  explicit Allreduce(MpiTransport& transport) : mpi_(transport) {}
  virtual ~Allreduce() = default;
  virtual std::string name() const = 0;
  // The dense sum (n values) over all ranks of every rank's `local` (indices ascending, < n).
  // Collective: every rank calls it with the same n.
  virtual std::vector<float> sum(const SparseVector& local, size_t n) = 0;
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
  // Passes `mine` around the ring (P-1 steps, rounds firstRound...) and adds every rank's into
  // sum (n values), mine included: the sparse allgather several algorithms end with.
  void ringAllgatherAdd(const SparseVector& mine, std::vector<float>& sum, int firstRound);
  MpiTransport& mpi_;
  AllreduceBytes bytes_;
};

// "ring" (dense reduce-scatter + allgather), "topka" (allgather of the local pairs),
// "ssar-recdbl" (recursive doubling with sparse sums), "ssar-split" (split to block owners, then
// allgather). An unknown name is an error listing them.
std::unique_ptr<Allreduce> createAllreduce(const std::string& name, MpiTransport& transport);
std::vector<std::string> allreduceNames();

// Helpers shared by the algorithms.
std::vector<char> packSparse(const SparseVector& v);
SparseVector unpackSparse(const std::vector<char>& bytes);
std::vector<char> packDense(const float* values, size_t n);
// a + b, both sorted by index; entries present in both are added
SparseVector mergeSparse(const SparseVector& a, const SparseVector& b);

}  // namespace marian
