// Top-k selection: the three thresholds against a sort, selection with and without AVX2 paths
// (ranges not a multiple of 8), and the residual bookkeeping of TopkSelector (nothing is lost).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

#include "comm/compression.h"
#include "comm/topk_selection.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"
#include "common/error.h"
#include "random_values.h"

namespace marian {
namespace {

Tensor hostTensor(std::vector<float>& x) { return Tensor(x.data(), Shape({int(x.size())}), Type::float32, cpuDevice()); }

// takeAbove moves the entries out; these tests want a copy of what it takes
SparseVector selectAbove(std::vector<float> x, float t) {
  SparseVector out;
  kernels::takeAbove(hostTensor(x), t, out.indices, out.values);
  return out;
}

TEST(TopkSelection, ExactThresholdIsTheKthLargestMagnitude) {
  std::vector<float> x = randomValues(10007, 1);
  std::vector<float> sorted(x.size());
  std::transform(x.begin(), x.end(), sorted.begin(), [](float v) { return std::fabs(v); });
  std::sort(sorted.rbegin(), sorted.rend());
  for(size_t k : {size_t(1), size_t(10), size_t(5000)}) {
    float t = kernels::exactThreshold(hostTensor(x), k);
    EXPECT_EQ(t, sorted[k - 1]);
    EXPECT_EQ(selectAbove(x, t).size(), k);
  }
  EXPECT_EQ(kernels::exactThreshold(hostTensor(x), x.size()), 0.f);
}

TEST(TopkSelection, SelectAboveMatchesAPlainLoopOnEveryLength) {
  for(size_t n : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(1003), size_t(3000001)}) {
    std::vector<float> x = randomValues(n, unsigned(n));
    for(size_t i = 0; i < n; i += 5)
      x[i] = 0.f;  // zeros are never selected, even with threshold 0
    for(float t : {0.f, 1.f, 3.f}) {
      SparseVector got = selectAbove(x, t);
      SparseVector expected;
      for(size_t i = 0; i < n; ++i)
        if(std::fabs(x[i]) >= t && x[i] != 0.f) {
          expected.indices.push_back(uint32_t(i));
          expected.values.push_back(x[i]);
        }
      ASSERT_EQ(got.indices, expected.indices) << "n=" << n << " t=" << t;
      ASSERT_EQ(got.values, expected.values);
    }
  }
}

// The sample has n/100 strata, so at keep 0.001 of 4M values about 40 sampled magnitudes lie
// above the threshold: one draw keeps k within about 16% (one standard deviation), the mean of
// 8 draws within about 6%. The bounds are about 2.5 deviations wide; the draws are fixed seeds.
TEST(TopkSelection, SampledThresholdKeepsAboutTheFraction) {
  std::vector<float> x = randomValues(4000000, 3);
  for(double keep : {0.01, 0.001}) {
    double k = keep * double(x.size()), sum = 0;
    for(uint64_t seed = 0; seed < 8; ++seed) {
      double kept = double(selectAbove(x, kernels::sampledThreshold(hostTensor(x), keep, seed)).size());
      EXPECT_GT(kept, 0.5 * k) << keep;
      EXPECT_LT(kept, 1.6 * k) << keep;
      sum += kept / k;
    }
    EXPECT_NEAR(sum / 8, 1.0, 0.15) << keep;
  }
}

TEST(TopkSelection, SelectorLosesNothingAndReusesItsThreshold) {
  size_t n = 5000, k = 50;
  for(TopkMethod method : {TopkMethod::exact, TopkMethod::sampled, TopkMethod::reuse}) {
    TopkSelector selector(n, method, 7, 3);
    std::vector<double> fed(n, 0.0), sent(n, 0.0);
    std::vector<float> thresholds;
    for(int step = 0; step < 7; ++step) {
      std::vector<float> g = randomValues(n, unsigned(100 + step));
      for(size_t i = 0; i < n; ++i)
        fed[i] += double(g[i]);
      SparseVector s = selector.select(hostTensor(g), k);
      thresholds.push_back(selector.lastThreshold());
      for(size_t j = 0; j < s.size(); ++j)
        sent[s.indices[j]] += double(s.values[j]);
      if(method == TopkMethod::exact)
        EXPECT_EQ(s.size(), k);
      else
        EXPECT_GT(s.size(), k / 3);
    }
    for(size_t i = 0; i < n; ++i)  // sent + residual == everything fed in
      ASSERT_NEAR(sent[i] + double(selector.state().residual[i]), fed[i], 1e-4);
    if(method == TopkMethod::reuse) {  // recomputed at calls 0, 3, 6 only
      EXPECT_EQ(thresholds[1], thresholds[0]);
      EXPECT_EQ(thresholds[2], thresholds[0]);
      EXPECT_NE(thresholds[3], thresholds[0]);
      EXPECT_EQ(thresholds[4], thresholds[3]);
    }
  }
}

TEST(TopkSelection, UnselectedEntriesGoBackToTheResidual) {
  size_t n = 100;
  TopkSelector selector(n, TopkMethod::exact, 1);
  std::vector<float> g(n, 0.f);
  g[3] = 5;
  g[10] = -7;
  g[50] = 6;
  g[60] = 0.5;
  SparseVector sent = selector.select(hostTensor(g), 3);
  ASSERT_EQ(sent.indices, (std::vector<uint32_t>{3, 10, 50}));
  SparseVector kept;
  kept.indices = {10};
  kept.values = {-14};
  selector.restoreUnselected(sent, kept);
  std::vector<float> residual = selector.state().residual;
  EXPECT_EQ(residual[3], 5.f);
  EXPECT_EQ(residual[10], 0.f);
  EXPECT_EQ(residual[50], 6.f);
  EXPECT_EQ(residual[60], 0.5f);
}

TEST(TopkSelection, UnknownMethodIsAnError) {
  EXPECT_THROW(parseTopkMethod("fastest"), Error);
  EXPECT_EQ(parseTopkMethod("reuse"), TopkMethod::reuse);
}

// Selection where the gradient lives: on a GPU (skipped without one) as on the host, over
// several rounds sent + residual equals everything fed in, and about the sampled fraction is sent;
// a selector restored from its state continues exactly as the original.
TEST(TopkSelection, OnEachDeviceSentPlusResidualIsEverythingFedInAndStateRestores) {
  std::vector<Device> devices = {cpuDevice()};
  if(gpuDeviceCount() > 0)
    devices.push_back(gpuDevice(0));
  else
    std::cout << "[          ] no GPU visible: the host selector only\n";
  size_t len = 1000000, k = len / 100;  // 100 sampled magnitudes above the threshold
  for(Device device : devices) {
    SCOPED_TRACE(device.toString());
    TopkSelector selector(len, TopkMethod::sampled, 5, 1, device);
    FlatBuffer grads(device, Type::float32, len);
    std::vector<double> fed(len, 0.0), sent(len, 0.0);
    for(unsigned round = 0; round < 4; ++round) {
      std::vector<float> g = randomValues(len, 100 + round);
      kernels::fromHost(grads.all(), g);
      SparseVector s = selector.select(grads.all(), k);
      EXPECT_GT(s.size(), k / 2);
      EXPECT_LT(s.size(), k * 2);
      for(size_t i = 0; i < len; ++i)
        fed[i] += g[i];
      for(size_t j = 0; j < s.size(); ++j) {
        ASSERT_LT(s.indices[j], len);
        if(j > 0) {
          ASSERT_LT(s.indices[j - 1], s.indices[j]);
        }
        sent[s.indices[j]] += s.values[j];
      }
    }
    std::vector<float> residual = selector.state().residual;
    for(size_t i = 0; i < len; ++i)
      ASSERT_NEAR(sent[i] + residual[i], fed[i], 1e-4) << "at " << i;

    TopkSelector restored(len, TopkMethod::sampled, 5, 1, device);
    restored.setState(selector.state());
    std::vector<float> g = randomValues(len, 999);
    kernels::fromHost(grads.all(), g);
    SparseVector a = selector.select(grads.all(), k), b = restored.select(grads.all(), k);
    EXPECT_EQ(a.indices, b.indices);
    EXPECT_EQ(a.values, b.values);
  }
}

}  // namespace
}  // namespace marian

namespace marian {
namespace {

// DGC's momentum correction and factor masking by hand (momentum 0.5, k = 1): the velocity
// u = 0.5 u + x accumulates into the residual, and a sent entry's velocity is cleared.
TEST(TopkSelection, MomentumCorrectionByHand) {
  TopkSelector s(4, TopkMethod::exact, 1, 1, cpuDevice(), 0.5f);
  std::vector<float> x1 = {4, 1, -2, 0}, x2 = {1, 1, 1, 1};
  SparseVector sent = s.select(Tensor(x1.data(), Shape({4}), Type::float32, cpuDevice()), 1);
  EXPECT_EQ(sent.indices, std::vector<uint32_t>({0}));
  EXPECT_EQ(sent.values, std::vector<float>({4}));
  EXPECT_EQ(s.state().residual, std::vector<float>({0, 1, -2, 0}));
  EXPECT_EQ(s.state().velocity, std::vector<float>({0, 1, -2, 0}));
  // u = 0.5 [0, 1, -2, 0] + 1 = [1, 1.5, 0, 1]; residual [1, 2.5, -2, 1]: sends 2.5 at 1
  sent = s.select(Tensor(x2.data(), Shape({4}), Type::float32, cpuDevice()), 1);
  EXPECT_EQ(sent.indices, std::vector<uint32_t>({1}));
  EXPECT_EQ(sent.values, std::vector<float>({2.5f}));
  EXPECT_EQ(s.state().residual, std::vector<float>({1, 0, -2, 1}));
  EXPECT_EQ(s.state().velocity, std::vector<float>({1, 0, 0, 1}));
  // the state carries the velocity to a new selector
  TopkSelector copy(4, TopkMethod::exact, 1, 1, cpuDevice(), 0.5f);
  copy.setState(s.state());
  EXPECT_EQ(copy.state().velocity, s.state().velocity);
  EXPECT_THROW(TopkSelector(4, TopkMethod::exact, 1, 1, cpuDevice(), 1.f), std::exception);
}

// The density's warm-up (--grad-dropping-warmup W): exponential from 1 to the target over W
// steps, the formula dropping and compressed allreduce share.
TEST(TopkSelection, CompressionWarmupFallsExponentially) {
  Compression c;
  c.keep = 0.01;
  c.warmup = 4;
  EXPECT_DOUBLE_EQ(c.keepAt(0), 1.0);
  EXPECT_NEAR(c.keepAt(2), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(c.keepAt(4), 0.01);
  EXPECT_DOUBLE_EQ(c.keepAt(100), 0.01);
  EXPECT_EQ(c.keptOf(1000, 2), 100u);
  EXPECT_EQ(c.keptOf(10, 4), 1u);  // never nothing
  c.warmup = 0;
  EXPECT_DOUBLE_EQ(c.keepAt(0), 0.01);
}

}  // namespace
}  // namespace marian
