// Top-k selection: the three thresholds against a sort, selection with and without AVX2 paths
// (ranges not a multiple of 8), and the residual bookkeeping of TopkSelector (nothing is lost).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

#include "comm/dropper.h"
#include "comm/topk_selection.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"
#include "common/error.h"
#include "random_values.h"

namespace marian {
namespace {

TEST(TopkSelection, ExactThresholdIsTheKthLargestMagnitude) {
  std::vector<float> x = randomValues(10007, 1);
  std::vector<float> sorted(x.size());
  std::transform(x.begin(), x.end(), sorted.begin(), [](float v) { return std::fabs(v); });
  std::sort(sorted.rbegin(), sorted.rend());
  for(size_t k : {size_t(1), size_t(10), size_t(5000)}) {
    float t = exactThreshold(x.data(), x.size(), k);
    EXPECT_EQ(t, sorted[k - 1]);
    EXPECT_EQ(selectAbove(x.data(), x.size(), t).size(), k);
  }
  EXPECT_EQ(exactThreshold(x.data(), x.size(), x.size()), 0.f);
}

TEST(TopkSelection, SelectAboveMatchesAPlainLoopOnEveryLength) {
  for(size_t n : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(1003), size_t(3000001)}) {
    std::vector<float> x = randomValues(n, unsigned(n));
    for(size_t i = 0; i < n; i += 5)
      x[i] = 0.f;  // zeros are never selected, even with threshold 0
    for(float t : {0.f, 1.f, 3.f}) {
      SparseVector got = selectAbove(x.data(), n, t);
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

TEST(TopkSelection, SampledThresholdKeepsAboutTheFraction) {
  std::vector<float> x = randomValues(2000000, 3);
  std::mt19937_64 rng(5);
  for(double keep : {0.01, 0.001}) {
    double k = keep * double(x.size());
    double kept = double(selectAbove(x.data(), x.size(), sampledThreshold(x.data(), x.size(), keep, rng)).size());
    EXPECT_GT(kept, 0.8 * k) << keep;
    EXPECT_LT(kept, 1.25 * k) << keep;
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
      SparseVector s = selector.select(g.data(), k);
      thresholds.push_back(selector.lastThreshold());
      for(size_t j = 0; j < s.size(); ++j)
        sent[s.indices[j]] += double(s.values[j]);
      if(method == TopkMethod::exact)
        EXPECT_EQ(s.size(), k);
      else
        EXPECT_GT(s.size(), k / 3);
    }
    for(size_t i = 0; i < n; ++i)  // sent + residual == everything fed in
      ASSERT_NEAR(sent[i] + double(selector.residual()[i]), fed[i], 1e-4);
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
  SparseVector sent = selector.select(g.data(), 3);
  ASSERT_EQ(sent.indices, (std::vector<uint32_t>{3, 10, 50}));
  SparseVector kept;
  kept.indices = {10};
  kept.values = {-14};
  selector.restoreUnselected(sent, kept);
  EXPECT_EQ(selector.residual()[3], 5.f);
  EXPECT_EQ(selector.residual()[10], 0.f);
  EXPECT_EQ(selector.residual()[50], 6.f);
  EXPECT_EQ(selector.residual()[60], 0.5f);
}

TEST(TopkSelection, UnknownMethodIsAnError) {
  EXPECT_THROW(parseTopkMethod("fastest"), Error);
  EXPECT_EQ(parseTopkMethod("reuse"), TopkMethod::reuse);
}

// Gradient dropping where the gradient lives: on a GPU (skipped without one) as on the host,
// over several rounds sent + residual equals everything fed in, and about `keep` is sent.
TEST(GradientDropper, OnEachDeviceSentPlusResidualIsEverythingFedIn) {
  std::vector<Device> devices = {cpuDevice()};
  if(gpuDeviceCount() > 0)
    devices.push_back(gpuDevice(0));
  else
    std::cout << "[          ] no GPU visible: the host dropper only\n";
  size_t n = 200000, offset = 50000, len = 100000;
  for(Device device : devices) {
    SCOPED_TRACE(device.toString());
    GradientDropper dropper(n, 5, device);
    FlatBuffer grads(device, Type::float32, len);
    std::vector<double> fed(n, 0.0), sent(n, 0.0);
    for(unsigned round = 0; round < 4; ++round) {
      std::vector<float> g = randomValues(len, 100 + round);
      kernels::fromHost(grads.all(), g);
      SparseVector s = dropper.drop(grads.all(), offset, 0.01);
      EXPECT_GT(s.size(), len / 200);
      EXPECT_LT(s.size(), len / 50);
      for(size_t i = 0; i < len; ++i)
        fed[offset + i] += g[i];
      for(size_t k = 0; k < s.size(); ++k) {
        ASSERT_LT(s.indices[k], len);
        if(k > 0) {
          ASSERT_LT(s.indices[k - 1], s.indices[k]);
        }
        sent[offset + s.indices[k]] += s.values[k];
      }
    }
    std::vector<float> residual = dropper.residual();
    for(size_t i = 0; i < n; ++i)
      ASSERT_NEAR(sent[i] + residual[i], fed[i], 1e-4) << "at " << i;
  }
}

}  // namespace
}  // namespace marian
