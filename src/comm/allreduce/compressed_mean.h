#pragma once
// defines: marian::CompressedMeanAllreduce — the mean over ranks of a dense vector sent in a
// compressed encoding, with error feedback on both sides (the compressed allreduce of 1-bit Adam,
// Tang et al., ICML 2021; DeepSpeed's compressed_allreduce). Rank j serves chunk j (equal parts
// of the vector):
//   worker: x = values + its error; chunk j of x encoded and sent to rank j; its error = x - what
//           the encoding stands for;
//   server: y = the mean of the P decoded chunks + its error, encoded and sent to every rank; its
//           error likewise;
//   every rank: values = the servers' decoded chunks, the same everywhere.
// About 2 (P-1)/P times the encoded vector's bytes sent per rank and call, each phase to every
// rank at once (directExchange: a latency a phase, not P-1). The encodings:
// OneBitAllreduce (a sign a value, onebit.h) and QuantizedAllreduce (8, 4 or 2 bits, quantized.h).
// Not a sum of sparse pairs, so not in the table of --sparse-allreduce algorithms.
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/equal_split.h"

namespace marian {

class CompressedMeanAllreduce : public Allreduce {
public:
  CompressedMeanAllreduce(Transport& transport, size_t n);
  AllreduceResult reduce(const SparseVector& local, size_t n, size_t k) override;  // an error: dense only

  // values (n): this rank's vector, which becomes the compressed mean over ranks. Collective.
  void averageCompressed(std::vector<float>& values);

  size_t size() const { return n_; }
  Range chunk(int rank) const { return equalPart(n_, size_t(rank), size_t(transport_.size())); }
  // This rank's worker error (n values) and server error (its chunk's values).
  const std::vector<float>& workerError() const { return workerError_; }
  const std::vector<float>& serverError() const { return serverError_; }
  void setErrors(std::vector<float> worker, std::vector<float> server);

protected:
  // Chunk j's values x on the wire, with error[i] = x[i] - what its encoding stands for.
  virtual std::vector<char> encode(int j, const float* x, float* error) const = 0;
  // out[i] += weight * what chunk j's bytes stand for.
  virtual void decode(int j, const std::vector<char>& bytes, float* out, float weight) const = 0;
  // The bytes of chunk j's encoding (a receive is posted for them before they come).
  virtual size_t encodedSize(int j) const = 0;
  size_t n_;

private:
  std::vector<float> workerError_, serverError_;
  std::vector<float> x_, y_;  // a call's values plus the worker error, and the served chunk's mean
};

}  // namespace marian
