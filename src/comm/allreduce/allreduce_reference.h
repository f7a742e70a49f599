#pragma once
// defines: what each allreduce algorithm must return, computed on one rank from every rank's
// input, with no communication: the checks of marian-commbench and the MPI tests.
#include <string>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/onebit.h"

namespace marian {

// The dense sum, every rank's pairs added in rank order.
std::vector<float> denseReference(const std::vector<SparseVector>& inputs, size_t n);
// gTop-k's definition (seed 001): the selection of the top operator folded over the reduction
// tree in which round d joins rank r+d into rank r for r a multiple of 2d; its values every
// rank's sum at those indices (in rank order), so that nothing a rank sent is lost; ties to the
// lower index. Computed apart from the algorithm's own selection code (k 0: every index).
SparseVector globalTopkReference(const std::vector<SparseVector>& inputs, size_t k);
// Whether `got`, the result of algorithm `name` with target k, is right for these inputs
// (bitwise: integer-valued inputs, or algorithms that add in rank order).
bool matchesReference(const std::string& name, const AllreduceResult& got, const std::vector<SparseVector>& inputs,
                      size_t n, size_t k);

// 1-bit Adam's compressed mean (comm/allreduce/onebit.h) in double, for all ranks at once, with
// every rank's worker error and every chunk's server error carried from call to call.
class OneBitReference {
public:
  OneBitReference(size_t n, size_t ranks, std::vector<size_t> segmentStarts, OneBitScale scale = OneBitScale::rms);
  // every rank's input (n values each): the mean every rank gets
  std::vector<double> average(const std::vector<std::vector<float>>& inputs);
  const std::vector<double>& workerError(size_t rank) const { return worker_[rank]; }
  const std::vector<double>& serverError() const { return server_; }  // n values (chunk j: rank j's)

private:
  size_t n_, ranks_;
  std::vector<size_t> segmentStarts_;
  OneBitScale scale_;
  std::vector<std::vector<double>> worker_;  // per rank, n values
  std::vector<double> server_;               // n values (chunk j: rank j's)
};

// The quantized compressed mean (comm/allreduce/quantized.h) in double, for all ranks at once:
// a scale per block of each chunk (its largest magnitude over L), codes rounded to nearest, every
// rank's worker error and every chunk's server error carried from call to call.
class QuantizedReference {
public:
  QuantizedReference(size_t n, size_t ranks, int bits, size_t block);
  // every rank's input (n values each): the mean every rank gets
  std::vector<double> average(const std::vector<std::vector<float>>& inputs);
  const std::vector<double>& workerError(size_t rank) const { return worker_[rank]; }
  const std::vector<double>& serverError() const { return server_; }  // n values (chunk j: rank j's)

private:
  size_t n_, ranks_, block_;
  int bits_;
  std::vector<std::vector<double>> worker_;
  std::vector<double> server_;
};

}  // namespace marian
