#pragma once
// defines: marian::PowerSgd — rank-r compression of a gradient's matrices with error feedback
// (Vogels, Karimireddy & Jaggi, NeurIPS 2019; PyTorch DDP's powerSGD_hook). For each matrix M
// (the rank's gradient plus its residual) and the shared warm-started Q (cols x r):
//   P = M Q, summed over ranks, orthogonalised (Gram-Schmidt over its r columns);
//   Q_rank = M^T P; the residual keeps M - P Q_rank^T (what this rank's part of the projection
//   left out); Q = the sum of the Q_rank, and the gradient becomes P Q^T = P P^T (sum of the M).
// What is not compressed (vectors, and matrices too small to gain 2x) is summed exactly in the
// same message as Q. Two dense allreduces a call, of (rows + cols) x r floats a matrix, no index
// exchange. The sum of what is applied and of every rank's residual is the sum of everything the
// ranks fed in (to rounding): nothing is lost.
#include <cstdint>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/equal_split.h"

namespace marian {

class PowerSgd {
public:
  struct Matrix {
    size_t offset, rows, cols;  // in the vector's coordinates, row-major
  };
  // Whether a rows x cols matrix is worth compressing at rank r (at least 2x fewer floats).
  static bool compresses(size_t rows, size_t cols, int rank);

  // n: the vector's size; matrices: its compressed ranges (disjoint); seed: the same on every rank,
  // so that the first Q is the same everywhere (afterwards it is the summed Q, alike anyway).
  PowerSgd(size_t n, std::vector<Matrix> matrices, int rank, uint64_t seed);

  // values (n, on the host): this rank's gradient, which becomes the sum over ranks of the
  // matrices' rank-r approximations and the exact sum elsewhere. Collective over `sum`'s ranks.
  void reduce(std::vector<float>& values, Allreduce& sum);

  size_t size() const { return n_; }
  // floats a call sends into the two allreduces
  size_t floatsPerCall() const;
  // what the matrices' approximations left out so far (n values, 0 outside the matrices)
  const std::vector<float>& residual() const { return residual_; }
  void setResidual(std::vector<float> residual);
  // every matrix's Q, one after another (the warm start; the same on every rank)
  const std::vector<float>& qs() const { return q_; }
  void setQs(std::vector<float> qs);

private:
  size_t n_;
  std::vector<Matrix> matrices_;
  int rank_;
  std::vector<size_t> pAt_, qAt_;  // each matrix's P and Q in the packed messages
  std::vector<Range> uncompressed_;  // the ranges outside every matrix
  size_t pFloats_ = 0, uncompressedFloats_ = 0;
  std::vector<float> residual_, q_;
};

}  // namespace marian
