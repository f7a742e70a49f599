// Forward values of the CPU kernels against hand-computed or naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/counter_hash.h"
#include "tensors/kernels.h"
#include "tensors/optimizer_functors.h"
#include "random_values.h"

namespace marian {
namespace {

// Host data in a CPU tensor, owned by the test.
struct HostTensor {
  std::unique_ptr<FlatBuffer> buf;
  Tensor t;
  HostTensor(const Shape& s, std::vector<float> v = {}, Type type = Type::float32) {
    buf = std::make_unique<FlatBuffer>(cpuDevice(), type, s.elements());
    t = buf->view(0, s);
    if(!v.empty())
      kernels::fromHost(t, v);
  }
  std::vector<float> host() const { return kernels::toHost(t); }
};

HostTensor ints(std::vector<int> v) {
  HostTensor h(Shape({int(v.size())}), {}, Type::int32);
  kernels::fromHostInts(h.t, v);
  return h;
}

TEST(Kernels, GemmMatchesNaiveProductForAllTransposes) {
  int m = 5, k = 7, n = 3;
  for(bool ta : {false, true})
    for(bool tb : {false, true}) {
      std::vector<float> a = randomValues(m * k, 1), b = randomValues(k * n, 2);
      HostTensor A(ta ? Shape{k, m} : Shape{m, k}, a), B(tb ? Shape{n, k} : Shape{k, n}, b);
      HostTensor C(Shape{m, n});
      kernels::gemm(C.t, A.t, B.t, ta, tb, 2.f, 0.f);
      std::vector<float> c = C.host();
      for(int i = 0; i < m; ++i)
        for(int j = 0; j < n; ++j) {
          double ref = 0;
          for(int l = 0; l < k; ++l)
            ref += double(ta ? a[l * m + i] : a[i * k + l]) * (tb ? b[j * k + l] : b[l * n + j]);
          EXPECT_NEAR(c[i * n + j], 2 * ref, 1e-4);
        }
    }
}

TEST(Kernels, GemmRejectsMismatchedInnerDimensions) {
  HostTensor A(Shape{2, 3}), B(Shape{4, 5}), C(Shape{2, 5});
  EXPECT_THROW(kernels::gemm(C.t, A.t, B.t, false, false, 1.f, 0.f), Error);
}

TEST(Kernels, SoftmaxRowsSumToOneAndLogSoftmaxAgrees) {
  std::vector<float> x = {1, 2, 3, 1000, 1001, 1002};  // the second row would overflow exp
  HostTensor X(Shape{2, 3}, x), Y(Shape{2, 3}), L(Shape{2, 3});
  kernels::softmax(Y.t, X.t);
  kernels::logSoftmax(L.t, X.t);
  std::vector<float> y = Y.host(), l = L.host();
  double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  EXPECT_NEAR(y[0], e1 / (e1 + e2 + e3), 1e-6);
  EXPECT_NEAR(y[3], y[0], 1e-6);  // shift invariance
  for(int i = 0; i < 6; ++i)
    EXPECT_NEAR(std::exp(l[i]), y[i], 1e-6);
}

TEST(Kernels, CrossEntropyWithSmoothingAndMask) {
  std::vector<float> x = {0.5f, -1.f, 2.f, 0.f, 0.f, 0.f};
  HostTensor X(Shape{2, 3}, x), loss(Shape{2}), mask(Shape{2}, {1.f, 0.f});
  HostTensor labels = ints({2, 1});
  float eps = 0.1f;
  kernels::crossEntropy(loss.t, X.t, labels.t, mask.t, eps);
  double lse = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0));
  double nll = lse - 2.0, meanNll = lse - (0.5 - 1.0 + 2.0) / 3.0;
  EXPECT_NEAR(loss.host()[0], (1 - eps) * nll + eps * meanNll, 1e-5);
  EXPECT_EQ(loss.host()[1], 0.f);  // padding
  HostTensor bad = ints({3, 0});
  EXPECT_THROW(kernels::crossEntropy(loss.t, X.t, bad.t, Tensor(), 0.f), Error);
  // the gradient refuses it too, instead of writing past the row
  HostTensor dX(Shape{2, 3}), dloss(Shape{2}, {1.f, 1.f});
  EXPECT_THROW(kernels::crossEntropyGrad(dX.t, X.t, bad.t, Tensor(), 0.f, dloss.t, true), Error);
}

// The gradients a first consumer writes (accumulate false) are what it adds to zeros, whatever
// the memory held: cross-entropy (one exponential a logit when writing, two when adding: within
// float rounding; masked rows 0) and the unary functions (the same arithmetic: to the bit).
TEST(Kernels, WrittenGradientsAreTheSumOntoZeros) {
  const int rows = 5, n = 1003;
  std::vector<float> x = randomValues(size_t(rows) * n, 61), nan(size_t(rows) * n, std::nanf(""));
  HostTensor X(Shape{rows, n}, x), mask(Shape{rows}, {1.f, 0.f, 1.f, 1.f, 0.f}), dloss(Shape{rows}, randomValues(rows, 62));
  HostTensor labels = ints({4, 1002, 0, 517, 3}), added(Shape{rows, n}), written(Shape{rows, n}, nan);
  kernels::crossEntropyGrad(added.t, X.t, labels.t, mask.t, 0.1f, dloss.t, true);
  kernels::crossEntropyGrad(written.t, X.t, labels.t, mask.t, 0.1f, dloss.t, false);
  std::vector<float> a = added.host(), w = written.host();
  for(size_t i = 0; i < a.size(); ++i) {
    if(i / n == 1 || i / n == 4) {
      ASSERT_EQ(w[i], 0.f) << "masked row, at " << i;
    }
    ASSERT_NEAR(w[i], a[i], 1e-5f * std::fabs(a[i]) + 1e-9f) << "at " << i;
  }
  HostTensor y(Shape{rows, n}), dy(Shape{rows, n}, randomValues(size_t(rows) * n, 63));
  for(UnaryOp op : {UnaryOp::Relu, UnaryOp::Tanh, UnaryOp::Gelu}) {
    HostTensor addedUnary(Shape{rows, n}), writtenUnary(Shape{rows, n}, nan);
    kernels::unary(op, y.t, X.t);
    kernels::unaryGrad(op, addedUnary.t, X.t, y.t, dy.t, true);
    kernels::unaryGrad(op, writtenUnary.t, X.t, y.t, dy.t, false);
    EXPECT_EQ(writtenUnary.host(), addedUnary.host()) << "op " << int(op);
  }
}

TEST(Kernels, LayerNormNormalisesRows) {
  std::vector<float> x = randomValues(4 * 8, 3);
  HostTensor X(Shape{4, 8}, x), Y(Shape{4, 8});
  kernels::layerNorm(Y.t, X.t, Tensor(), Tensor(), 1e-6f);
  std::vector<float> y = Y.host();
  for(int r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for(int j = 0; j < 8; ++j)
      mean += y[r * 8 + j] / 8.0;
    for(int j = 0; j < 8; ++j)
      var += (y[r * 8 + j] - mean) * (y[r * 8 + j] - mean) / 8.0;
    EXPECT_NEAR(mean, 0, 1e-5);
    EXPECT_NEAR(var, 1, 1e-4);
  }
}

TEST(Kernels, GatherScatterAndIndexErrors) {
  HostTensor table(Shape{3, 2}, {0, 1, 10, 11, 20, 21}), y(Shape{3, 2});
  HostTensor idx = ints({2, 0, 2});
  kernels::gatherRows(y.t, table.t, idx.t);
  EXPECT_EQ(y.host(), (std::vector<float>{20, 21, 0, 1, 20, 21}));
  HostTensor grad(Shape{3, 2});
  kernels::scatterAddRows(grad.t, idx.t, y.t);
  EXPECT_EQ(grad.host(), (std::vector<float>{0, 1, 0, 0, 40, 42}));
  HostTensor bad = ints({3});
  HostTensor y1(Shape{1, 2});
  try {
    kernels::gatherRows(y1.t, table.t, bad.t);
    FAIL();
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 3 out of range"), std::string::npos) << e.what();
  }
}

TEST(Kernels, TransposeAndSlices) {
  std::vector<float> x(24);
  for(int i = 0; i < 24; ++i)
    x[i] = float(i);
  HostTensor X(Shape{2, 3, 4}, x), Y(Shape{4, 2, 3});
  kernels::transpose(Y.t, X.t, {2, 0, 1}, false);
  std::vector<float> y = Y.host();
  for(int a = 0; a < 2; ++a)
    for(int b = 0; b < 3; ++b)
      for(int c = 0; c < 4; ++c)
        EXPECT_EQ(y[c * 6 + a * 3 + b], x[a * 12 + b * 4 + c]);
  HostTensor part(Shape{2, 1, 4});
  kernels::extractSlice(part.t, X.t, 1, 2, false);
  EXPECT_EQ(part.host(), (std::vector<float>{8, 9, 10, 11, 20, 21, 22, 23}));
}

TEST(Kernels, HeadsOfRealPositionsByHand) {
  // 2 sentences of 2 positions, the second sentence's last one padding: 3 rows of 2 heads of 1
  HostTensor rows(Shape{3, 2}, {0, 1, 10, 11, 20, 21}), heads(Shape{2, 2, 2, 1});
  HostTensor rowOf = ints({0, 1, 2, -1});
  kernels::headsFromRows(heads.t, rows.t, rowOf.t, false);
  // [b][h][t]: head 0 of sentence 0 = rows 0, 1 at column 0; padding is 0
  EXPECT_EQ(heads.host(), (std::vector<float>{0, 10, 1, 11, 20, 0, 21, 0}));
  HostTensor back(Shape{3, 2}, {5, 5, 5, 5, 5, 5});
  kernels::rowsFromHeads(back.t, heads.t, rowOf.t, false);
  EXPECT_EQ(back.host(), rows.host());
  kernels::rowsFromHeads(back.t, heads.t, rowOf.t, true);
  EXPECT_EQ(back.host(), (std::vector<float>{0, 2, 20, 22, 40, 42}));
  kernels::headsFromRows(heads.t, rows.t, rowOf.t, true);  // padding unchanged when adding
  EXPECT_EQ(heads.host(), (std::vector<float>{0, 20, 2, 22, 40, 0, 42, 0}));
  HostTensor bad = ints({0, 3, 2, -1});
  EXPECT_THROW(kernels::headsFromRows(heads.t, rows.t, bad.t, false), Error);
}

TEST(Kernels, BroadcastAddSumsOverBroadcastAxes) {
  HostTensor dst(Shape{1, 3}), src(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  kernels::add(dst.t, src.t, 0.5f);
  EXPECT_EQ(dst.host(), (std::vector<float>{2.5f, 3.5f, 4.5f}));
}

// Dropout without a stored mask multiplies by exactly the mask bernoulliMask draws.
TEST(Kernels, DropoutMultiplyIsTimesTheBernoulliMask) {
  size_t n = 50001;
  HostTensor x(Shape{int(n)}, randomValues(n, 5)), mask(Shape{int(n)}), y(Shape{int(n)}), acc(Shape{int(n)}, randomValues(n, 6));
  std::vector<float> before = acc.host();
  kernels::bernoulliMask(mask.t, 0.7f, 99);
  kernels::dropoutMultiply(y.t, x.t, 0.7f, 99, false);
  kernels::dropoutMultiply(acc.t, x.t, 0.7f, 99, true);
  std::vector<float> xs = x.host(), m = mask.host(), ys = y.host(), as = acc.host();
  for(size_t i = 0; i < n; ++i) {
    ASSERT_EQ(ys[i], xs[i] * m[i]) << i;
    ASSERT_EQ(as[i], std::fmaf(xs[i], m[i], before[i])) << i;
  }
}

// With mask rows, row r of x multiplies row maskRowOf[r] of the mask bernoulliMask draws for
// [mask rows, n]: rows naming the same mask row drop the same units.
TEST(Kernels, DropoutMultiplyByMaskRowsIsTimesThoseRowsOfTheMask) {
  int n = 700;
  std::vector<int> maskRowOf = {2, 0, 2, 1, 0, 3, 3, 1, 2};
  int rows = int(maskRowOf.size());
  HostTensor x(Shape{rows, n}, randomValues(size_t(rows) * n, 5)), y(Shape{rows, n}),
      acc(Shape{rows, n}, randomValues(size_t(rows) * n, 6)), mask(Shape{4, n}), rowOf = ints(maskRowOf);
  std::vector<float> before = acc.host();
  kernels::bernoulliMask(mask.t, 0.6f, 31);
  kernels::dropoutMultiply(y.t, x.t, 0.6f, 31, false, rowOf.t);
  kernels::dropoutMultiply(acc.t, x.t, 0.6f, 31, true, rowOf.t);
  std::vector<float> xs = x.host(), m = mask.host(), ys = y.host(), as = acc.host();
  for(int r = 0; r < rows; ++r)
    for(int j = 0; j < n; ++j) {
      size_t i = size_t(r) * n + j;
      float mj = m[size_t(maskRowOf[r]) * n + j];
      ASSERT_EQ(ys[i], xs[i] * mj) << r << ", " << j;
      ASSERT_EQ(as[i], std::fmaf(xs[i], mj, before[i])) << r << ", " << j;
    }
  HostTensor tooFew = ints({0, 1});
  EXPECT_THROW(kernels::dropoutMultiply(y.t, x.t, 0.6f, 31, false, tooFew.t), Error);
}

TEST(Kernels, DropoutMaskRateAndDeterminism) {
  HostTensor m1(Shape{100000}), m2(Shape{100000}), m3(Shape{100000});
  kernels::bernoulliMask(m1.t, 0.7f, 42);
  kernels::bernoulliMask(m2.t, 0.7f, 42);
  kernels::bernoulliMask(m3.t, 0.7f, 43);
  std::vector<float> a = m1.host();
  EXPECT_EQ(a, m2.host());
  EXPECT_NE(a, m3.host());
  size_t kept = 0;
  for(float v : a) {
    EXPECT_TRUE(v == 0.f || std::fabs(v - 1.f / 0.7f) < 1e-6f);
    kept += v != 0.f;
  }
  EXPECT_NEAR(double(kept) / a.size(), 0.7, 0.01);
}

TEST(Kernels, AdamStepMatchesHandComputation) {
  HostTensor p(Shape{2}, {1.f, -2.f}), g(Shape{2}, {0.5f, -0.1f}), m(Shape{2}), v(Shape{2});
  kernels::adamStep(p.t, g.t, m.t, v.t, 0.1f, 0.9f, 0.999f, 1e-8f, 1, 1);
  // first step: m_hat = g, v_hat = g^2, so p -= lr * sign(g) (up to eps)
  EXPECT_NEAR(p.host()[0], 0.9f, 1e-6);
  EXPECT_NEAR(p.host()[1], -1.9f, 1e-6);
  kernels::adamStep(p.t, g.t, m.t, v.t, 0.1f, 0.9f, 0.999f, 1e-8f, 2, 2);
  // constant gradient: bias-corrected moments stay g and g^2
  EXPECT_NEAR(p.host()[0], 0.8f, 1e-6);
  // the variance frozen after step 2: a gradient 4x as large moves m, not v (v_hat stays 0.25,
  // sqrt 0.5), so the step is lr x (0.9 m + 0.1 x 2) / (1 - 0.9^3) / 0.5
  std::vector<float> vBefore = v.host();
  HostTensor big(Shape{2}, {2.f, -0.4f});
  kernels::adamStep(p.t, big.t, m.t, v.t, 0.1f, 0.9f, 0.999f, 1e-8f, 3, 2, false);
  EXPECT_EQ(v.host(), vBefore);
  double m3 = 0.9 * (0.5 * (1 - 0.81)) + 0.1 * 2.0;  // m after two steps of 0.5 is 0.5 (1 - 0.9^2)
  EXPECT_NEAR(p.host()[0], 0.8 - 0.1 * (m3 / (1 - 0.729)) / 0.5, 1e-5);
  HostTensor q(Shape{2}, {1.f, 1.f});
  kernels::sgdStep(q.t, g.t, 0.5f);
  EXPECT_EQ(q.host(), (std::vector<float>{0.75f, 1.05f}));
}

// Whether a and b differ by at most `ulps` units of float's last place, of the larger of the two
// or of 1 (the inputs' order: a value that cancels to near 0 keeps the rounding of its terms).
::testing::AssertionResult withinRounding(const std::vector<float>& a, const std::vector<float>& b, int ulps) {
  if(a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " values against " << b.size();
  for(size_t k = 0; k < a.size(); ++k) {
    double scale = std::max({std::fabs(double(a[k])), std::fabs(double(b[k])), 1.0});
    if(std::fabs(double(a[k]) - double(b[k])) > ulps * scale * std::numeric_limits<float>::epsilon())
      return ::testing::AssertionFailure() << "value " << k << ": " << a[k] << " against " << b[k];
  }
  return ::testing::AssertionSuccess();
}

// The kernels whose loops run vectorised (Adam, dropout, the bias gradient's broadcast add, layer
// normalisation's gamma and beta gradients) give every value what their per-value rule gives one
// value at a time, on a length that leaves a remainder after the vector loop: to the bit in the
// Release build here, but the compiler may fuse a multiply and an add into one FMA in the kernel's
// file and not in this one (where it inlines, which -O2 decides otherwise than -O3), so within a
// few units in the last place; a wrong rule misses by far more.
TEST(Kernels, VectorisedLoopsMatchTheirRuleValueByValue) {
  const size_t n = 1003;
  std::vector<float> p0 = randomValues(n, 11), g = randomValues(n, 12), m0 = randomValues(n, 13), v0 = randomValues(n, 14);
  for(float& v : v0)
    v = v * v;
  for(bool updateVariance : {true, false})
    for(float meanOver : {1.f, 4.f}) {
      SCOPED_TRACE(testing::Message() << "variance " << updateVariance << " mean over " << meanOver);
      HostTensor p(Shape({int(n)}), p0), gt(Shape({int(n)}), g), m(Shape({int(n)}), m0), v(Shape({int(n)}), v0);
      kernels::adamStep(p.t, gt.t, m.t, v.t, 0.01f, 0.9f, 0.98f, 1e-9f, 7, updateVariance ? 7 : 5, updateVariance, meanOver);
      auto c = optimizer_functors::adamCorrections(p.t, gt.t, m.t, v.t, 0.9f, 0.98f, 7, updateVariance ? 7 : 5, meanOver);
      std::vector<float> ep = p0, em = m0, ev = v0;
      for(size_t i = 0; i < n; ++i)
        optimizer_functors::adam(ep[i], g[i], em[i], ev[i], 0.01f, 0.9f, 0.98f, 1e-9f, c, updateVariance);
      EXPECT_TRUE(withinRounding(p.host(), ep, 2));
      EXPECT_TRUE(withinRounding(m.host(), em, 2));
      EXPECT_TRUE(withinRounding(v.host(), ev, 2));
    }
  {
    HostTensor x(Shape({int(n)}), p0), y(Shape({int(n)}), m0);
    kernels::dropoutMultiply(y.t, x.t, 0.9f, 77, true, Tensor());
    DropoutMask mask(0.9f, 77);
    std::vector<float> expect = m0;
    for(size_t i = 0; i < n; ++i)
      expect[i] = mask.addTo(expect[i], p0[i], i);
    EXPECT_TRUE(withinRounding(y.host(), expect, 2));
  }
  const int rows = 17, cols = 59;  // odd widths: a vector remainder in every row
  std::vector<float> x = randomValues(rows * cols, 15), dy = randomValues(rows * cols, 16), gamma = randomValues(cols, 17);
  {
    HostTensor bias(Shape({1, cols}), randomValues(cols, 18)), grad(Shape({rows, cols}), dy);
    std::vector<float> expect = bias.host();
    kernels::add(bias.t, grad.t, 0.5f);
    for(int r = 0; r < rows; ++r)
      for(int j = 0; j < cols; ++j)
        expect[j] += 0.5f * dy[r * cols + j];
    EXPECT_TRUE(withinRounding(bias.host(), expect, 2 * rows));
  }
  {
    HostTensor xt(Shape({rows, cols}), x), dyt(Shape({rows, cols}), dy), gt(Shape({cols}), gamma),
        dg(Shape({cols})), db(Shape({cols}));
    kernels::layerNormGrad(Tensor(), dg.t, db.t, xt.t, gt.t, dyt.t, 1e-6f);
    std::vector<float> eg(cols, 0.f), eb(cols, 0.f);
    for(int r = 0; r < rows; ++r) {
      float mean = 0.f, var = 0.f;
      for(int j = 0; j < cols; ++j)
        mean += x[r * cols + j];
      mean /= float(cols);
      for(int j = 0; j < cols; ++j)
        var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean);
      float rstd = 1.f / std::sqrt(var / float(cols) + 1e-6f);
      for(int j = 0; j < cols; ++j) {
        eg[j] += dy[r * cols + j] * ((x[r * cols + j] - mean) * rstd);
        eb[j] += dy[r * cols + j];
      }
    }
    EXPECT_EQ(db.host(), eb);  // sums of the rows in order (no product to fuse)
    std::vector<float> dgamma = dg.host();
    for(int j = 0; j < cols; ++j)  // the row moments' own sums run as omp simd reductions
      EXPECT_NEAR(dgamma[j], eg[j], 1e-5f * (1.f + std::fabs(eg[j]))) << j;
  }
}

TEST(KernelThreads, PartsCoverTheRangeOnceAndRethrow) {
  cpu::setKernelThreads(3);
  for(size_t n : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(100000)}) {
    std::vector<int> seen(n, 0);
    cpu::parallelRanges(n, 1, [&](size_t b, size_t e) {
      for(size_t i = b; i < e; ++i)
        ++seen[i];
    });
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), std::ptrdiff_t(n)) << n;
  }
  EXPECT_THROW(cpu::parallelRanges(100, 1, [](size_t b, size_t) { ABORT_IF(b > 0, "part from {}", b); }), Error);
  cpu::setKernelThreads(1);
}

// Every threaded kernel computes each part as one thread does: the same bits on 1 and 3 threads
// (the products agree to rounding: BLAS may pick other kernels for a block of rows).
TEST(KernelThreads, KernelsGiveTheSameResultsOnOneAndThreeThreads) {
  const int rows = 300, n = 257;  // odd widths: parts end mid-vector
  auto run = [&](int threads) {
    cpu::setKernelThreads(threads);
    HostTensor x(Shape{rows, n}, randomValues(size_t(rows) * n, 1)), dy(Shape{rows, n}, randomValues(size_t(rows) * n, 2));
    HostTensor gamma(Shape{n}, randomValues(n, 3)), beta(Shape{n}, randomValues(n, 4));
    HostTensor y(Shape{rows, n}), dx(Shape{rows, n}), dg(Shape{n}), db(Shape{n});
    std::vector<std::vector<float>> out;
    kernels::layerNorm(y.t, x.t, gamma.t, beta.t, 1e-6f);
    kernels::layerNormGrad(dx.t, dg.t, db.t, x.t, gamma.t, dy.t, 1e-6f);
    out.insert(out.end(), {y.host(), dx.host(), dg.host(), db.host()});
    kernels::softmax(y.t, x.t);
    kernels::softmaxGrad(dx.t, y.t, dy.t);
    out.insert(out.end(), {y.host(), dx.host()});
    std::vector<int> labelValues(rows);
    for(int r = 0; r < rows; ++r)
      labelValues[r] = (r * 37) % n;
    HostTensor labels = ints(labelValues), loss(Shape{rows}), dloss(Shape{rows}, std::vector<float>(rows, 0.5f));
    kernels::crossEntropy(loss.t, x.t, labels.t, Tensor(), 0.1f);
    kernels::crossEntropyGrad(dx.t, x.t, labels.t, Tensor(), 0.1f, dloss.t, true);
    out.insert(out.end(), {loss.host(), dx.host()});
    kernels::binary(BinaryOp::Add, y.t, x.t, gamma.t);  // a bias row
    kernels::binaryGrad(BinaryOp::Mul, dx.t, Tensor(), x.t, dy.t, y.t);
    out.insert(out.end(), {y.host(), dx.host()});
    HostTensor m(Shape{rows, n}), v(Shape{rows, n});
    kernels::adamStep(x.t, dy.t, m.t, v.t, 1e-3f, 0.9f, 0.98f, 1e-9f, 1, 1);
    out.insert(out.end(), {x.host(), m.host(), v.host()});
    HostTensor c(Shape{rows, rows});
    kernels::gemm(c.t, x.t, dy.t, false, true, 1.f, 0.f);
    out.push_back(c.host());
    cpu::setKernelThreads(1);
    return out;
  };
  std::vector<std::vector<float>> one = run(1), three = run(3);
  for(size_t k = 0; k + 1 < one.size(); ++k)
    EXPECT_EQ(one[k], three[k]) << "result " << k;
  for(size_t i = 0; i < one.back().size(); ++i)
    ASSERT_NEAR(one.back()[i], three.back()[i], 1e-4f * (1.f + std::fabs(one.back()[i]))) << "product element " << i;
}

}  // namespace
}  // namespace marian
