// NodeShards, the layer under the sync and async graph groups, driven by hand on two CPU
// devices with plain SGD, against values computed here: in place (reduce-scatter, one clipped
// step over all shards, all-gather) and apart (pull, then a push that each shard applies at
// once, each device's gradient clipped alone), and its state saved and restored across layouts.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/parameters.h"
#include "optimizers/optimizer.h"
#include "tensors/kernels.h"
#include "training/graph_groups/apart_shards.h"
#include "training/graph_groups/in_place_shards.h"

namespace marian {
namespace {

constexpr size_t kN = 7;  // odd: the two shards differ in size (3 and 4)
constexpr float kLr = 0.5f;

std::vector<float> initial() { return {1, 2, 3, 4, 5, 6, 7}; }

// Shards: InPlaceShards or ApartShards
template <class Shards>
struct Node {
  std::vector<std::unique_ptr<Parameters>> devices;
  std::unique_ptr<Shards> shards;

  explicit Node(size_t n, std::function<std::unique_ptr<Optimizer>()> optimizer = [] { return std::make_unique<Sgd>(); }) {
    std::vector<Parameters*> params;
    for(size_t d = 0; d < n; ++d) {
      devices.push_back(std::make_unique<Parameters>(cpuDevice(int(d))));
      devices.back()->declare("w", Shape({int(kN)}), inits::fromVector(initial()));
      devices.back()->allocate();
      params.push_back(devices.back().get());
    }
    shards = std::make_unique<Shards>(params, optimizer, 0.f);
  }
  void setGrads(size_t d, const std::vector<float>& g) { kernels::fromHost(devices[d]->grads(), g); }
  std::vector<float> valuesOf(size_t d) { return kernels::toHost(devices[d]->values()); }
};

// p - lr * scale * g
std::vector<float> sgd(std::vector<float> p, const std::vector<float>& g, float scale) {
  for(size_t i = 0; i < p.size(); ++i)
    p[i] -= kLr * scale * g[i];
  return p;
}

const std::vector<float> g0 = {1, 0, -1, 2, 0, 1, 3}, g1 = {0, 2, 1, -2, 1, 1, 1};

std::vector<float> sum(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> s(a.size());
  for(size_t i = 0; i < a.size(); ++i)
    s[i] = a[i] + b[i];
  return s;
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for(float x : v)
    s += double(x) * x;
  return std::sqrt(s);
}

TEST(NodeShards, InPlaceSumsStepsOnceOverAllShardsAndGathers) {
  Node<InPlaceShards> node(2);
  ASSERT_EQ(node.shards->ranges()[0].size, 3u);
  node.setGrads(0, g0);
  node.setGrads(1, g1);
  for(size_t k = 0; k < 2; ++k)
    node.shards->sumDevicesInto(k, Range{0, kN}, {1, 1});
  float clip = 2.f;  // below the summed gradient's norm: one factor for both shards
  node.shards->step(kLr, clip, 0);
  node.shards->allGather();
  std::vector<float> summed = sum(g0, g1);
  std::vector<float> want = sgd(initial(), summed, float(clip / norm(summed)));
  for(size_t d = 0; d < 2; ++d)
    for(size_t i = 0; i < kN; ++i)
      EXPECT_FLOAT_EQ(node.valuesOf(d)[i], want[i]) << "device " << d << " entry " << i;
  EXPECT_EQ(node.shards->values(false), node.valuesOf(0));
}

// What 1-bit Adam reads: the optimizer's arrays (Adam's m and v, by name) over a range that crosses the
// shards' boundary, zeros before the first step.
TEST(NodeShards, OptimizerArraysAreReadAcrossShards) {
  Node<InPlaceShards> node(2, [] { return std::make_unique<Adam>(0.9f, 0.99f); });
  std::vector<float> got(4, -1.f);
  node.shards->adamMoments(0.9f).readSecond(Range{2, 4}, got.data());
  EXPECT_EQ(got, std::vector<float>(4, 0.f));
  node.setGrads(0, g0);
  node.setGrads(1, g1);
  for(size_t k = 0; k < 2; ++k)
    node.shards->sumDevicesInto(k, Range{0, kN}, {1, 1});
  node.shards->step(kLr, 0.f, 0);
  std::vector<float> summed = sum(g0, g1), m(4), v(4);
  // through the readers 1-bit Adam gets (the sync group's wiring), so m and v cannot swap
  AdamMoments moments = node.shards->adamMoments(0.9f);
  moments.readFirst(Range{2, 4}, m.data());
  moments.readSecond(Range{2, 4}, v.data());
  for(size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(m[i], (1.f - 0.9f) * summed[2 + i]) << i;
    EXPECT_FLOAT_EQ(v[i], (1.f - 0.99f) * summed[2 + i] * summed[2 + i]) << i;
  }
}

TEST(NodeShards, ApartPullsThenEachPushIsAppliedAtOnceAndClippedAlone) {
  Node<ApartShards> node(2);
  // device 0 pulls and pushes; device 1 pulled before that push, so its gradient is stale
  node.shards->pull(0);
  node.shards->pull(1);
  EXPECT_EQ(node.valuesOf(1), initial());
  node.setGrads(0, g0);
  node.shards->push(0, kLr, 0.f, 0);
  std::vector<float> afterFirst = sgd(initial(), g0, 1.f);
  EXPECT_EQ(node.shards->values(false), afterFirst);
  EXPECT_EQ(node.valuesOf(1), initial()) << "a push does not touch the other device's copy";
  node.setGrads(1, g1);
  float clip = 1.f;
  node.shards->push(1, kLr, clip, 1);
  std::vector<float> want = sgd(afterFirst, g1, float(clip / norm(g1)));
  std::vector<float> got = node.shards->values(false);
  for(size_t i = 0; i < kN; ++i)
    EXPECT_FLOAT_EQ(got[i], want[i]) << i;
  node.shards->pull(1);
  EXPECT_EQ(node.valuesOf(1), got);
}

TEST(NodeShards, ANonFiniteGradientNamesTheUpdate) {
  std::vector<float> bad = g0;
  bad[1] = std::nanf("");  // in shard 0, which device 0 steps
  auto expectNamed = [](auto step) {
    try {
      step();
      ADD_FAILURE() << "no error";
    } catch(const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("at update 42: training diverged"), std::string::npos) << e.what();
    }
  };
  Node<InPlaceShards> inPlace(2);
  inPlace.setGrads(0, bad);
  expectNamed([&] { inPlace.shards->step(kLr, 0.f, 41); });
  Node<ApartShards> apart(2);
  apart.setGrads(0, bad);
  expectNamed([&] { apart.shards->push(0, kLr, 0.f, 41); });
}

TEST(NodeShards, StateMovesBetweenPlacementsAndDeviceCounts) {
  Node<ApartShards> two(2);
  two.setGrads(0, g0);
  two.shards->push(0, kLr, 0.f, 0);
  ModelState saved;
  saved.n = kN;
  two.shards->saveTo(saved);
  EXPECT_EQ(saved.values, sgd(initial(), g0, 1.f));
  for(size_t devices : {1, 3}) {
    Node<InPlaceShards> other(devices);
    other.shards->restoreFrom(saved);
    for(size_t d = 0; d < devices; ++d)
      EXPECT_EQ(other.valuesOf(d), saved.values);
    ModelState again;
    again.n = kN;
    other.shards->saveTo(again);
    EXPECT_EQ(again.values, saved.values);
  }
}

}  // namespace
}  // namespace marian
