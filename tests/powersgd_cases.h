#pragma once
// The cases of PowerSGD (comm/powersgd.h and its use by GradientAllreducer), written once
// against Transport: under mpirun by test_gradient_allreducer_mpi.cpp, on threads by
// test_gradient_allreducer_in_process.cpp. On 2 to 4 ranks the factors, the sum and every rank's
// residual against values computed here in double from the shared first Q, twice (error
// feedback and warm start); on any rank count nothing is lost (what is applied plus every
// residual is everything fed in); a checkpoint taken between updates continues exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/allreduce/algorithms.h"
#include "comm/powersgd.h"
#include "gradient_allreducer_cases.h"
#include "random_values.h"

namespace marian {
namespace powersgd_cases {

using Matrix = std::vector<std::vector<double>>;

inline Matrix matrixAt(const std::vector<float>& v, size_t offset, size_t rows, size_t cols) {
  Matrix m(rows, std::vector<double>(cols));
  for(size_t i = 0; i < rows; ++i)
    for(size_t j = 0; j < cols; ++j)
      m[i][j] = v[offset + i * cols + j];
  return m;
}

using gradient_allreducer_cases::expectNear;

// A 3 x 2 matrix at 0 and a vector of 2 at 6, rank 1, on 2 to 4 ranks: after each of two calls
// the result is P Q^T of the summed factors and the vector's exact sum, and each rank's residual
// is its M - P Q_rank^T, computed here in double for every rank.
inline void factorsByHand(Transport& t) {
  constexpr int kMostRanks = 4;
  int ranks = t.size();
  if(ranks > kMostRanks)
    GTEST_SKIP() << "inputs written for up to " << kMostRanks << " ranks";
  PowerSgd psgd(8, {{0, 3, 2}}, 1, 42);
  auto sum = createAllreduce("ring", t, AllreduceSettings());
  std::vector<double> q = {psgd.qs()[0], psgd.qs()[1]};
  const std::vector<float> inputs[2][kMostRanks] = {
      {{1, 2, 3, 4, 5, 6, 1, 2}, {2, -1, 0, 1, 4, 2, 0.5f, 0}, {-3, 1, 2, 2, 0, -1, 2, 1}, {0.5f, 0, -2, 1, 3, 1, -1, 4}},
      {{0, 1, 2, 0, 1, 1, 3, -1}, {-1, 3, 1, 1, 0, 2, 1, 1}, {2, 2, -1, 0, 1, -2, 0, 3}, {1, -1, 0, 2, -2, 1, 2, 0.5f}}};
  std::vector<std::vector<double>> residual(size_t(ranks), std::vector<double>(6, 0.0));
  for(int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<Matrix> m(static_cast<size_t>(ranks));
    for(int r = 0; r < ranks; ++r) {
      m[size_t(r)] = matrixAt(inputs[call][r], 0, 3, 2);
      for(size_t i = 0; i < 3; ++i)
        for(size_t j = 0; j < 2; ++j)
          m[size_t(r)][i][j] += residual[size_t(r)][i * 2 + j];
    }
    // P = (sum of the M_r) Q, normalised (one column)
    std::vector<double> p(3, 0.0);
    double norm = 0;
    for(size_t i = 0; i < 3; ++i) {
      for(int r = 0; r < ranks; ++r)
        for(size_t j = 0; j < 2; ++j)
          p[i] += m[size_t(r)][i][j] * q[j];
      norm += p[i] * p[i];
    }
    for(double& v : p)
      v /= std::sqrt(norm);
    // Q_r = M_r^T P; Q = the sum of the Q_r; residual_r = M_r - P Q_r^T; the result P Q^T
    std::vector<std::vector<double>> qr(size_t(ranks), std::vector<double>(2, 0.0));
    q = {0, 0};
    for(int r = 0; r < ranks; ++r)
      for(size_t j = 0; j < 2; ++j) {
        for(size_t i = 0; i < 3; ++i)
          qr[size_t(r)][j] += m[size_t(r)][i][j] * p[i];
        q[j] += qr[size_t(r)][j];
      }
    std::vector<double> want(8, 0.0);
    for(size_t i = 0; i < 3; ++i)
      for(size_t j = 0; j < 2; ++j) {
        want[i * 2 + j] = p[i] * q[j];
        for(int r = 0; r < ranks; ++r)
          residual[size_t(r)][i * 2 + j] = m[size_t(r)][i][j] - p[i] * qr[size_t(r)][j];
      }
    for(int r = 0; r < ranks; ++r) {
      want[6] += double(inputs[call][r][6]);
      want[7] += double(inputs[call][r][7]);
    }

    std::vector<float> values = inputs[call][t.rank()];
    psgd.reduce(values, *sum);
    expectNear(values, want, "the sum");
    std::vector<double> mine = residual[size_t(t.rank())];
    mine.push_back(0.0);
    mine.push_back(0.0);
    expectNear(psgd.residual(), mine, "the residual");
    expectNear(psgd.qs(), q, "the warm start");
  }
}

// Any rank count: over several calls, everything applied plus every rank's residual is
// everything the ranks fed in; the ranks get the same sum.
inline void nothingIsLost(Transport& t) {
  size_t n = 400;
  PowerSgd psgd(n, {{0, 20, 10}, {230, 7, 5}, {300, 10, 10}}, 2, 7);
  auto sum = createAllreduce("ring", t, AllreduceSettings());
  std::vector<float> fed(n, 0.f), applied(n, 0.f);
  for(unsigned call = 0; call < 4; ++call) {
    std::vector<float> values = randomValues(n, 100 * unsigned(t.rank()) + call);
    for(size_t i = 0; i < n; ++i)
      fed[i] += values[i];
    psgd.reduce(values, *sum);
    ASSERT_EQ(values, gradient_allreducer_cases::fromRankZero(t, values)) << "call " << call;
    for(size_t i = 0; i < n; ++i)
      applied[i] += values[i];
  }
  std::vector<float> residuals = psgd.residual();
  sum->sumDense(residuals);
  sum->sumDense(fed);
  double worst = 0, largest = 0;
  for(size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::fabs(double(applied[i]) + residuals[i] - fed[i]));
    largest = std::max(largest, std::fabs(double(fed[i])));
  }
  EXPECT_LT(worst, 1e-4 * largest) << "applied + residuals differ from what was fed in";
  double compressed = 0;  // the approximation really left something out
  for(float e : psgd.residual())
    compressed += std::fabs(e);
  EXPECT_GT(compressed, 1.0);
}

// The parameters of the allreducer cases below: W (30 x 20, a Q of 40 values at rank 2), b (20,
// not compressed), E (40 x 8, a Q of 16), in that order.
inline void declareMatrices(Parameters& layout) {
  layout.declare("W", Shape({30, 20}), inits::zeros());
  layout.declare("b", Shape({20}), inits::zeros());
  layout.declare("E", Shape({40, 8}), inits::zeros());
  layout.allocate();
}

inline Options rankTwoAfterOneDenseUpdate() {
  return gradient_allreducer_cases::options("ring", 1.f, "sampled", "powersgd-rank: 2\npowersgd-start: 1");
}

// The sums of updates [from, to) through `reducer`, of each rank's random values.
inline std::vector<std::vector<float>> sumsOf(Transport& t, GradientAllreducer& reducer, FlatBuffer& g, unsigned from,
                                              unsigned to) {
  std::vector<std::vector<float>> sums;
  for(unsigned u = from; u < to; ++u) {
    reducer.setStep(u);
    kernels::fromHost(g.all(), randomValues(g.size(), 31 * unsigned(t.rank()) + u));
    reducer.reduce(std::vector<Tensor>{g.all()});
    sums.push_back(kernels::toHost(g.all()));
  }
  return sums;
}

// GradientAllreducer with --powersgd-rank in two buckets, after one dense update: a checkpoint
// taken after 3 updates, restored in a fresh allreducer, gives the next 2 updates' sums bitwise.
inline void checkpointContinuesExactly(Transport& t) {
  Parameters layout(cpuDevice());
  declareMatrices(layout);
  size_t n = layout.totalSize();
  std::vector<GradientBucket> buckets = {{{0, 620}}, {{620, 320}}};
  FlatBuffer g(cpuDevice(), Type::float32, n);
  GradientAllreducer first(rankTwoAfterOneDenseUpdate(), t, {g.all()}, 5, buckets, &layout);
  EXPECT_TRUE(first.compresses());
  sumsOf(t, first, g, 0, 3);
  ModelState saved = gradient_allreducer_cases::savedOnEveryRank(t, first, n);
  ASSERT_EQ(saved.extras.count("powersgd-q"), 1u);
  ASSERT_EQ(saved.extras.count("allreduce-residual.rank" + std::to_string(t.size() - 1)), 1u);
  GradientAllreducer resumed(rankTwoAfterOneDenseUpdate(), t, {g.all()}, 5, buckets, &layout);
  resumed.restoreFrom(saved);
  std::vector<std::vector<float>> uninterrupted = sumsOf(t, first, g, 3, 5);
  std::vector<std::vector<float>> again = sumsOf(t, resumed, g, 3, 5);
  EXPECT_EQ(again, uninterrupted);
}

// Saved with W and b in bucket 0 and E in bucket 1 (Qs of 40 and 16 values), resumed with E's
// bucket first: as many buckets and Q values, but each bucket's Qs of another size, so Q starts
// at random in both, as from a checkpoint without Qs (taken in turn, E's Q would be 16 of W's
// values and W's the rest of W's and E's).
inline void qsOfOtherBucketsStartAtRandom(Transport& t) {
  Parameters layout(cpuDevice());
  declareMatrices(layout);
  size_t n = layout.totalSize();
  FlatBuffer g(cpuDevice(), Type::float32, n);
  GradientAllreducer first(rankTwoAfterOneDenseUpdate(), t, {g.all()}, 5, {{{0, 620}}, {{620, 320}}}, &layout);
  sumsOf(t, first, g, 0, 3);
  ModelState saved = gradient_allreducer_cases::savedOnEveryRank(t, first, n);
  ModelState withoutQs = saved;
  ASSERT_EQ(withoutQs.extras.erase("powersgd-q"), 1u);
  std::vector<GradientBucket> swapped = {{{620, 320}}, {{0, 620}}};
  GradientAllreducer resumed(rankTwoAfterOneDenseUpdate(), t, {g.all()}, 5, swapped, &layout);
  resumed.restoreFrom(saved);
  GradientAllreducer random(rankTwoAfterOneDenseUpdate(), t, {g.all()}, 5, swapped, &layout);
  random.restoreFrom(withoutQs);
  std::vector<std::vector<float>> got = sumsOf(t, resumed, g, 3, 5);
  std::vector<std::vector<float>> want = sumsOf(t, random, g, 3, 5);
  EXPECT_EQ(got, want);
}

}  // namespace powersgd_cases
}  // namespace marian
