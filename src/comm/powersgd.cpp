#include "comm/powersgd.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

Tensor hostMatrix(float* data, size_t rows, size_t cols) {
  return Tensor(data, Shape({int(rows), int(cols)}), Type::float32, cpuDevice());
}

// Gram-Schmidt over the r columns of a row-major rows x r matrix; a column with nothing left
// after the earlier ones are taken out stays zero.
void orthogonalizeColumns(float* p, size_t rows, size_t r) {
  for(size_t j = 0; j < r; ++j) {
    for(size_t k = 0; k < j; ++k) {
      double dot = 0;
      for(size_t i = 0; i < rows; ++i)
        dot += double(p[i * r + j]) * double(p[i * r + k]);
      for(size_t i = 0; i < rows; ++i)
        p[i * r + j] -= float(dot) * p[i * r + k];
    }
    double norm = 0;
    for(size_t i = 0; i < rows; ++i)
      norm += double(p[i * r + j]) * double(p[i * r + j]);
    norm = std::sqrt(norm);
    float scale = norm > 1e-30 ? float(1.0 / norm) : 0.f;
    for(size_t i = 0; i < rows; ++i)
      p[i * r + j] *= scale;
  }
}

}  // namespace

bool PowerSgd::compresses(size_t rows, size_t cols, int rank) {
  return rows > 1 && cols > 1 && rows * cols >= 2 * size_t(rank) * (rows + cols);
}

PowerSgd::PowerSgd(size_t n, std::vector<Matrix> matrices, int rank, uint64_t seed)
    : n_(n), matrices_(std::move(matrices)), rank_(rank), residual_(n, 0.f) {
  ABORT_IF(rank_ < 1, "PowerSGD needs a rank >= 1, not {}", rank_);
  std::sort(matrices_.begin(), matrices_.end(), [](const Matrix& a, const Matrix& b) { return a.offset < b.offset; });
  size_t p = 0, q = 0, at = 0;
  for(const Matrix& m : matrices_) {
    ABORT_IF(m.offset < at || m.offset + m.rows * m.cols > n_, "PowerSGD matrix at {} of {} x {} overlaps or leaves a vector of {}",
             m.offset, m.rows, m.cols, n_);
    if(m.offset > at)
      uncompressed_.push_back({at, m.offset - at});
    at = m.offset + m.rows * m.cols;
    pAt_.push_back(p);
    qAt_.push_back(q);
    p += m.rows * size_t(rank_);
    q += m.cols * size_t(rank_);
  }
  if(at < n_)
    uncompressed_.push_back({at, n_ - at});
  pFloats_ = p;
  for(const Range& u : uncompressed_)
    uncompressedFloats_ += u.size;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  q_.resize(q);
  for(float& v : q_)
    v = normal(rng);
}

size_t PowerSgd::floatsPerCall() const { return pFloats_ + q_.size() + uncompressedFloats_; }

void PowerSgd::setResidual(std::vector<float> residual) {
  ABORT_IF(residual.size() != n_, "A PowerSGD residual of {} values for {}", residual.size(), n_);
  residual_ = std::move(residual);
}

void PowerSgd::setQs(std::vector<float> qs) {
  ABORT_IF(qs.size() != q_.size(), "PowerSGD's Q matrices hold {} values, not {}", qs.size(), q_.size());
  q_ = std::move(qs);
}

void PowerSgd::reduce(std::vector<float>& values, Allreduce& sum) {
  ABORT_IF(values.size() != n_, "PowerSGD for {} values given {}", n_, values.size());
  size_t r = size_t(rank_);
  std::vector<float> ps(pFloats_);  // every matrix's P
  // error feedback, then P = M Q
  for(size_t j = 0; j < matrices_.size(); ++j) {
    const Matrix& m = matrices_[j];
    float* M = values.data() + m.offset;
    const float* e = residual_.data() + m.offset;
    for(size_t i = 0; i < m.rows * m.cols; ++i)
      M[i] += e[i];
    kernels::gemm(hostMatrix(ps.data() + pAt_[j], m.rows, r), hostMatrix(M, m.rows, m.cols),
                  hostMatrix(q_.data() + qAt_[j], m.cols, r), false, false, 1.f, 0.f);
  }
  if(!ps.empty())
    sum.sumDense(ps);
  // Q of this rank = M^T P (P orthogonalised), its residual M - P Q^T; then one message with
  // every Q and the uncompressed values
  std::vector<float> message(q_.size());
  for(size_t j = 0; j < matrices_.size(); ++j) {
    const Matrix& m = matrices_[j];
    float* P = ps.data() + pAt_[j];
    orthogonalizeColumns(P, m.rows, r);
    float* M = values.data() + m.offset;
    float* Q = message.data() + qAt_[j];
    kernels::gemm(hostMatrix(Q, m.cols, r), hostMatrix(M, m.rows, m.cols), hostMatrix(P, m.rows, r), true, false, 1.f, 0.f);
    float* e = residual_.data() + m.offset;
    std::copy(M, M + m.rows * m.cols, e);
    kernels::gemm(hostMatrix(e, m.rows, m.cols), hostMatrix(P, m.rows, r), hostMatrix(Q, m.cols, r), false, true, -1.f, 1.f);
  }
  for(const Range& u : uncompressed_)
    message.insert(message.end(), values.begin() + long(u.offset), values.begin() + long(u.end()));
  sum.sumDense(message);
  // the sum: P Q^T for every matrix (Q kept as the next call's warm start), the rest exact
  std::copy(message.begin(), message.begin() + long(q_.size()), q_.begin());
  for(size_t j = 0; j < matrices_.size(); ++j) {
    const Matrix& m = matrices_[j];
    kernels::gemm(hostMatrix(values.data() + m.offset, m.rows, m.cols), hostMatrix(ps.data() + pAt_[j], m.rows, r),
                  hostMatrix(q_.data() + qAt_[j], m.cols, r), false, true, 1.f, 0.f);
  }
  size_t at = q_.size();
  for(const Range& u : uncompressed_) {
    std::copy(message.begin() + long(at), message.begin() + long(at + u.size), values.begin() + long(u.offset));
    at += u.size;
  }
}

}  // namespace marian
