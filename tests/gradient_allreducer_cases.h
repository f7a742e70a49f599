#pragma once
// The cases of GradientAllreducer, written once against Transport and run on each rank: under
// mpirun by test_gradient_allreducer_mpi.cpp, on threads by test_gradient_allreducer_in_process.cpp.
// With the gradient in one shard it gives bitwise the sums of a reference built from the comm
// pieces, for every algorithm and selection method; with two shards (selected where each lives,
// summed on the host, scattered back) every rank ends with the same sum: the exact one dense, one
// that loses nothing compressed; cut into buckets (as the overlapped allreduce reduces them) the
// dense sum is bitwise the unbucketed one, and each bucket selects its own top-k without losing
// anything; local gradients, local clipping and momentum correction by hand on 2 ranks, and their
// state in a checkpoint.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "comm/allreduce/algorithms.h"
#include "comm/transport.h"
#include "common/byte_record.h"
#include "comm/topk_selection.h"
#include "random_values.h"
#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"
#include "training/exchange/gradient_allreducer.h"

namespace marian {
namespace gradient_allreducer_cases {

constexpr int kTestTag = 31000;  // the test's own messages, apart from every allreducer tag

// Rank 0's values on every rank.
inline std::vector<float> fromRankZero(Transport& t, const std::vector<float>& mine) {
  if(t.rank() != 0)
    return unpackArray<float>(t.recv(Channel::collective, 0, kTestTag, t.peerTimeout(), "rank 0's values").bytes,
                              "Test values");
  for(int r = 1; r < t.size(); ++r)
    t.send(Channel::collective, r, kTestTag, packArray(mine), t.peerTimeout());
  return mine;
}

// got equals want (computed in double) to 1e-5 relative
inline void expectNear(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for(size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " at " << i;
}

// An exchange's state (an allreducer's, OuterRounds') as every rank reads it from a checkpoint:
// saved (collective: rank 0 gathers it) and sent from rank 0 to the others.
template <class Exchange>
ModelState savedOnEveryRank(Transport& t, Exchange& reducer, size_t n) {
  ModelState state;
  state.n = n;
  state.ranks = t.size();
  reducer.saveTo(state);
  std::vector<char> packed = state.pack();
  if(t.rank() == 0)
    for(int r = 1; r < t.size(); ++r)
      t.send(Channel::collective, r, kTestTag, packed, t.peerTimeout());
  else
    packed = t.recv(Channel::collective, 0, kTestTag, t.peerTimeout(), "the checkpoint").bytes;
  return ModelState::unpack(packed);
}

// compression: YAML lines that replace the defaults of src/comm/compression.h's options
inline Options options(const std::string& algo, float density, const std::string& method, const std::string& compression = "") {
  YAML::Node node = YAML::Load("sparse-allreduce: " + algo + "\ncompression-density: " + std::to_string(density) +
                               "\ntopk-selection: " + method + "\ntopk-reuse-every: 2\noktopk-repartition-every: 2\n"
                               "grad-dropping-warmup: 0\ngrad-dropping-momentum: 0\ncompression-clip-norm: 0\n"
                               "local-gradients: 'off'\nlocal-average-freq: 0\nlocal-average-state: all\nclip-norm: 0\n");
  for(const auto& kv : YAML::Load(compression.empty() ? "{}" : compression))
    node[kv.first.as<std::string>()] = kv.second;
  return Options(node);
}

// The reference, from the comm pieces directly: one top-k selector with its residual over the
// whole gradient, the algorithm's sum, the global selection's leftovers back to the residual.
struct Reference {
  std::unique_ptr<Allreduce> algorithm;
  std::unique_ptr<TopkSelector> selector;
  double density;
  Reference(Transport& t, const std::string& algo, double density, const std::string& method, size_t n, uint64_t seed)
      : density(density) {
    AllreduceSettings settings;
    settings.repartitionEvery = 2;
    settings.thresholdEvery = 2;
    algorithm = createAllreduce(algo, t, settings);
    selector = std::make_unique<TopkSelector>(n, parseTopkMethod(method), seed * 7919 + uint64_t(t.rank()), 2);
  }
  void reduce(std::vector<float>& g) {
    if(density >= 1.0)
      return algorithm->sumDense(g);
    size_t k = std::max<size_t>(1, size_t(std::llround(density * double(g.size()))));
    SparseVector sent = selector->select(Tensor(g.data(), Shape({int(g.size())}), Type::float32, cpuDevice()), k);
    AllreduceResult result = algorithm->reduce(sent, g.size(), k);
    if(result.isSelection)
      selector->restoreUnselected(sent, result.sparse);
    std::fill(g.begin(), g.end(), 0.f);
    result.addTo(g.data());
  }
};

// A gradient in one shard: the allreducer gives bitwise the reference's sums, every algorithm,
// dense and compressed, every selection method, over rounds (residuals carried).
inline void oneShardEqualsTheReference(Transport& t) {
  size_t n = 5003;
  for(const AllreduceEntry& entry : allreduceAlgorithms())
    for(float density : {1.f, 0.05f})
      for(std::string method : {"sampled", "exact", "reuse"}) {
        if(density == 1.f && method != "sampled")
          continue;
        const std::string& algo = entry.name;
        SCOPED_TRACE(algo + " density " + std::to_string(density) + " " + method);
        Reference reference(t, algo, density, method, n, 11);
        FlatBuffer buffer(cpuDevice(), Type::float32, n);
        GradientAllreducer reducer(options(algo, density, method), t, {buffer.all()}, 11);
        for(unsigned round = 0; round < 3; ++round) {
          std::vector<float> g = randomValues(n, 1000 * unsigned(t.rank()) + round);
          kernels::fromHost(buffer.all(), g);
          reference.reduce(g);
          reducer.reduce(std::vector<Tensor>{buffer.all()});
          ASSERT_EQ(kernels::toHost(buffer.all()), g) << "round " << round;
        }
      }
}

// Integer values: every order of adding them gives the same float, so bitwise comparisons of
// differently cut sums are fair.
inline std::vector<float> integerValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-50, 50);
  std::vector<float> v(n);
  for(float& x : v)
    x = float(d(rng));
  return v;
}

// Integer values plus a sign-matched i % 1000 / 1024 (magnitudes seldom tie, so a top-k
// selection takes about k); sums of a few ranks and rounds of them are still exact in float.
inline std::vector<float> exactValues(size_t n, unsigned seed) {
  std::vector<float> v = integerValues(n, seed);
  for(size_t i = 0; i < n; ++i)
    v[i] += (v[i] < 0 ? -1.f : 1.f) * float(i % 1000) / 1024.f;
  return v;
}

// Two shards on devices a and b (CPU devices here; GPU 0 twice where a GPU is visible, which
// runs the selection, residual and scatter on the GPU): every rank ends with the same result,
// and it is right: density 1 gives the exact sum of every rank's input (computed here from
// their seeds); the compressed ones (density 0.1, the dense algorithm then summing the
// selections) keep at most P x k entries and lose nothing: what they applied plus every rank's
// residual is everything fed in.
inline void twoShardsOn(Transport& t, Device a, Device b) {
  size_t n = 4000;
  struct Case {
    std::string algo;
    float density;
  };
  for(const Case& c : {Case{"dense", 1.f}, Case{"dense", 0.1f}, Case{"topka", 0.1f}, Case{"gtopk", 0.1f},
                       Case{"oktopk", 0.1f}}) {
    SCOPED_TRACE(c.algo + " density " + std::to_string(c.density) + " on " + a.toString() + " and " + b.toString());
    FlatBuffer first(a, Type::float32, 1500), second(b, Type::float32, n - 1500);
    GradientAllreducer reducer(options(c.algo, c.density, "exact"), t, {first.all(), second.all()}, 3);
    std::vector<float> fedIn(n, 0.f), applied(n, 0.f);
    for(unsigned round = 0; round < 3; ++round) {
      std::vector<float> g = exactValues(n, 77 * unsigned(t.rank()) + round), exact(n, 0.f);
      for(int r = 0; r < t.size(); ++r) {
        std::vector<float> theirs = exactValues(n, 77 * unsigned(r) + round);
        for(size_t i = 0; i < n; ++i)
          exact[i] += theirs[i];
      }
      kernels::fromHost(first.all(), std::vector<float>(g.begin(), g.begin() + 1500));
      kernels::fromHost(second.all(), std::vector<float>(g.begin() + 1500, g.end()));
      reducer.reduce(std::vector<Tensor>{first.all(), second.all()});
      std::vector<float> sum = kernels::toHost(first.all()), rest = kernels::toHost(second.all());
      sum.insert(sum.end(), rest.begin(), rest.end());
      ASSERT_EQ(sum, fromRankZero(t, sum)) << "round " << round;
      if(c.density == 1.f) {
        ASSERT_EQ(sum, exact) << "round " << round;
        continue;
      }
      size_t nonzero = 0;
      for(size_t i = 0; i < n; ++i) {
        nonzero += sum[i] != 0.f;
        fedIn[i] += exact[i];
        applied[i] += sum[i];
      }
      EXPECT_GT(nonzero, 0u);
      EXPECT_LE(nonzero, size_t(t.size()) * (n / 10 + 2));
    }
    if(c.density == 1.f)
      continue;
    ModelState state;
    state.n = n;
    reducer.saveTo(state);  // collective: every rank's residual to rank 0
    if(t.rank() != 0)
      continue;
    for(int r = 0; r < t.size(); ++r) {
      const std::vector<float>& residual = state.extras.at("allreduce-residual.rank" + std::to_string(r));
      ASSERT_EQ(residual.size(), n);
      for(size_t i = 0; i < n; ++i)
        applied[i] += residual[i];
    }
    EXPECT_EQ(applied, fedIn) << "what was applied plus the residuals is not what was fed in";
  }
}

inline void twoShardsGiveEveryRankTheRightSum(Transport& t) {
  twoShardsOn(t, cpuDevice(0), cpuDevice(1));
  if(::testing::Test::HasFatalFailure())  // runOnRanks stops the other ranks, which wait in twoShardsOn
    return;
  int gpus = gpuDeviceCount();
  float ranksWithGpus = gpus > 0 ? 1.f : 0.f;
  t.allreduceSum(&ranksWithGpus, 1, t.peerTimeout(), "whether every rank sees a GPU");
  if(ranksWithGpus == float(t.size()))  // every rank or none
    twoShardsOn(t, gpuDevice(0), gpuDevice(gpus > 1 ? 1 : 0));
}

// Two shards [0, 1500) and [1500, 4000); the second bucket crosses their boundary, the third is
// two ranges apart (buckets follow backward's order, not the layout's), and they are reduced
// bucket by bucket, last first.
inline const std::vector<GradientBucket> kBuckets = {{{0, 700}}, {{700, 1000}, {2900, 1100}}, {{1700, 1200}}};

inline void reduceBuckets(GradientAllreducer& reducer, const std::vector<Tensor>& shards) {
  for(size_t b = reducer.buckets(); b-- > 0;)
    reducer.reduceBucket(b, shards);
}

inline void bucketsGiveTheUnbucketedDenseSumBitwise(Transport& t) {
  size_t n = 4000;
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    SCOPED_TRACE(entry.name);
    FlatBuffer a1(cpuDevice(0), Type::float32, 1500), a2(cpuDevice(1), Type::float32, n - 1500);
    FlatBuffer b1(cpuDevice(0), Type::float32, 1500), b2(cpuDevice(1), Type::float32, n - 1500);
    GradientAllreducer whole(options(entry.name, 1.f, "sampled"), t, {a1.all(), a2.all()}, 3);
    GradientAllreducer bucketed(options(entry.name, 1.f, "sampled"), t, {b1.all(), b2.all()}, 3, kBuckets);
    ASSERT_EQ(bucketed.buckets(), 3u);
    for(unsigned round = 0; round < 2; ++round) {
      std::vector<float> g = integerValues(n, 31 * unsigned(t.rank()) + round);
      for(FlatBuffer* first : {&a1, &b1})
        kernels::fromHost(first->all(), std::vector<float>(g.begin(), g.begin() + 1500));
      for(FlatBuffer* second : {&a2, &b2})
        kernels::fromHost(second->all(), std::vector<float>(g.begin() + 1500, g.end()));
      whole.reduce(std::vector<Tensor>{a1.all(), a2.all()});
      reduceBuckets(bucketed, {b1.all(), b2.all()});
      ASSERT_EQ(kernels::toHost(b1.all()), kernels::toHost(a1.all())) << "round " << round;
      ASSERT_EQ(kernels::toHost(b2.all()), kernels::toHost(a2.all())) << "round " << round;
    }
  }
}

// With density 0.1 each bucket's piece of each shard selects its own top 10% (exact threshold,
// distinct magnitudes: exactly that many per rank, so at most P x k of a bucket's sum is
// non-zero), and nothing is lost: the sum plus every rank's residual (gathered as a checkpoint
// does) is the sum of everything fed in, exactly (exactValues), over rounds.
inline void eachBucketSelectsItsOwnTopkAndLosesNothing(Transport& t) {
  size_t n = 4000;
  int ranks = t.size();
  for(std::string algo : {"topka", "ssar-split", "dsar-split", "gtopk", "oktopk"}) {
    SCOPED_TRACE(algo);
    FlatBuffer first(cpuDevice(0), Type::float32, 1500), second(cpuDevice(1), Type::float32, n - 1500);
    GradientAllreducer reducer(options(algo, 0.1f, "exact"), t, {first.all(), second.all()}, 5, kBuckets);
    std::vector<double> fedIn(n, 0.0), applied(n, 0.0);
    for(unsigned round = 0; round < 3; ++round) {
      std::vector<float> g = exactValues(n, 17 * unsigned(t.rank()) + round);
      std::vector<float> all = g;
      t.allreduceSum(all.data(), n, t.peerTimeout(), "the inputs' sum");  // integers + k/1024
      kernels::fromHost(first.all(), std::vector<float>(g.begin(), g.begin() + 1500));
      kernels::fromHost(second.all(), std::vector<float>(g.begin() + 1500, g.end()));
      reduceBuckets(reducer, {first.all(), second.all()});
      std::vector<float> sum = kernels::toHost(first.all()), rest = kernels::toHost(second.all());
      sum.insert(sum.end(), rest.begin(), rest.end());
      for(size_t i = 0; i < n; ++i) {
        fedIn[i] += double(all[i]);
        applied[i] += double(sum[i]);
      }
      // every piece selects 10% of itself (bucket 1's pieces: [700, 1500), [1500, 1700) and
      // [2900, 4000)), so a bucket's sum has at most P x 10% of it, + 1 per piece for rounding
      for(size_t b = 0; b < kBuckets.size(); ++b) {
        size_t nonzero = 0;
        for(const Range& r : kBuckets[b])
          for(size_t i = r.offset; i < r.end(); ++i)
            nonzero += sum[i] != 0.f;
        EXPECT_GE(nonzero, 1u) << "bucket " << b;
        EXPECT_LE(nonzero, size_t(ranks) * (bucketSize(kBuckets[b]) / 10 + 3)) << "bucket " << b;
      }
    }
    ModelState state;
    state.n = n;
    reducer.saveTo(state);  // collective: every rank's residual to rank 0
    if(t.rank() != 0)
      continue;
    // EXPECT, not ASSERT: a rank 0 that returned early would leave the others waiting in the next
    // algorithm's collectives until their peer timeout
    for(int r = 0; r < ranks; ++r) {
      auto residual = state.extras.find("allreduce-residual.rank" + std::to_string(r));
      bool whole = residual != state.extras.end() && residual->second.size() == n;
      EXPECT_TRUE(whole) << "rank " << r << "'s residual";
      for(size_t i = 0; whole && i < n; ++i)
        applied[i] += double(residual->second[i]);
    }
    size_t lost = 0, at = 0;
    for(size_t i = 0; i < n; ++i)
      if(std::abs(applied[i] - fedIn[i]) > 1e-3 && lost++ == 0)
        at = i;
    EXPECT_EQ(lost, 0u) << "the first at entry " << at << ": applied and held back " << applied[at] << ", fed in "
                        << fedIn[at];
  }
}


// Local gradients (Aji et al. 2019) on 2 ranks, by hand: n = 8, density 0.25 (k = 2), exact
// selection, topka (the sum of both ranks' top 2). Rank 0 sends {0: 8, 4: -7}, rank 1 sends
// {1: 6, 5: -5}, so the global sum is [8, 6, 0, 0, -7, -5, 0, 0]. partial adds the rank's own
// unsent part (the change of its residual), sum its whole gradient.
inline const std::vector<float> kLocalGradient[2] = {{8, -1, 2, 0.5f, -7, 3, 0, 1}, {1, 6, -2, 0.25f, 1, -5, 2, 0}};

inline std::vector<float> reduceOnce(Transport& t, const std::string& local, const std::string& extra = "") {
  FlatBuffer g(cpuDevice(), Type::float32, 8);
  GradientAllreducer reducer(options("topka", 0.25f, "exact", "local-gradients: " + local + "\n" + extra), t,
                             {g.all()}, 1);
  kernels::fromHost(g.all(), kLocalGradient[t.rank()]);
  reducer.reduce(std::vector<Tensor>{g.all()});
  return kernels::toHost(g.all());
}

inline void localGradientsAddTheOwnGradientByHand(Transport& t) {
  if(t.size() != 2)
    GTEST_SKIP() << "hand-computed for 2 ranks";
  int r = t.rank();
  const std::vector<float> global = {8, 6, 0, 0, -7, -5, 0, 0};
  EXPECT_EQ(reduceOnce(t, "'off'"), global);
  const std::vector<float> partial[2] = {{8, 5, 2, 0.5f, -7, -2, 0, 1}, {9, 6, -2, 0.25f, -6, -5, 2, 0}};
  EXPECT_EQ(reduceOnce(t, "partial"), partial[r]);
  const std::vector<float> sum[2] = {{16, 5, 2, 0.5f, -14, -2, 0, 1}, {9, 12, -2, 0.25f, -6, -10, 2, 0}};
  EXPECT_EQ(reduceOnce(t, "sum"), sum[r]);
}

// Local clipping (DGC): on 2 ranks with --compression-clip-norm C a rank's gradient is clipped
// to C / sqrt(2) before selection. Rank 0's gradient has norm sqrt(128.25); C = that / sqrt(2)
// makes the threshold h half of it, so rank 0 sends its top 2 halved; rank 1's norm,
// sqrt(71.0625), is over h too: its top 2 scaled by h / sqrt(71.0625).
inline void localClippingScalesTheRanksGradientByHand(Transport& t) {
  if(t.size() != 2)
    GTEST_SKIP() << "hand-computed for 2 ranks";
  double h = std::sqrt(128.25) / 2.0, second = h / std::sqrt(71.0625);
  std::vector<float> sum = reduceOnce(t, "'off'", "compression-clip-norm: " + std::to_string(h * std::sqrt(2.0)));
  const std::vector<double> expected = {4, 6 * second, 0, 0, -3.5, -5 * second, 0, 0};
  for(size_t i = 0; i < 8; ++i)
    EXPECT_NEAR(sum[i], expected[i], 1e-5) << i;
}

// Over rounds, with residuals carried, a rank's locally applied total (partial) is the global
// total plus what it still holds back: every gradient it computed was applied once locally, and
// what it sent once globally; with the whole checkpointed state nothing is lost. Every scheme
// that compresses, on every rank count.
inline void localGradientsApplyEveryOwnGradientOnce(Transport& t) {
  size_t n = 3000;
  int ranks = t.size();
  for(std::string algo : {"topka", "ssar-split", "gtopk", "oktopk"}) {
    SCOPED_TRACE(algo);
    FlatBuffer local(cpuDevice(), Type::float32, n), global(cpuDevice(), Type::float32, n);
    GradientAllreducer withLocal(options(algo, 0.05f, "exact", "local-gradients: partial"), t, {local.all()}, 9);
    GradientAllreducer plain(options(algo, 0.05f, "exact"), t, {global.all()}, 9);
    std::vector<double> appliedLocal(n, 0.0), appliedGlobal(n, 0.0);
    for(unsigned round = 0; round < 4; ++round) {
      std::vector<float> g = integerValues(n, 13 * unsigned(t.rank()) + round);
      for(size_t i = 0; i < n; ++i)
        g[i] += (g[i] < 0 ? -1.f : 1.f) * float(i % 1000) / 1024.f;  // a unique top-k
      kernels::fromHost(local.all(), g);
      kernels::fromHost(global.all(), g);
      withLocal.reduce(std::vector<Tensor>{local.all()});
      plain.reduce(std::vector<Tensor>{global.all()});
      std::vector<float> l = kernels::toHost(local.all()), p = kernels::toHost(global.all());
      for(size_t i = 0; i < n; ++i) {
        appliedLocal[i] += double(l[i]);
        appliedGlobal[i] += double(p[i]);
      }
    }
    ModelState state;
    state.n = n;
    withLocal.saveTo(state);  // collective: rank 0 gets every rank's residual
    std::vector<float> residual;  // this rank's own: rank 0 holds them all
    if(t.rank() == 0) {
      for(int r = 1; r < ranks; ++r)
        t.send(Channel::collective, r, kTestTag, packArray(state.extras.at("allreduce-residual.rank" + std::to_string(r))),
               t.peerTimeout());
      residual = state.extras.at("allreduce-residual.rank0");
    } else {
      residual = unpackArray<float>(t.recv(Channel::collective, 0, kTestTag, t.peerTimeout(), "its residual").bytes,
                                    "Test residual");
    }
    ASSERT_EQ(residual.size(), n);
    for(size_t i = 0; i < n; ++i)
      ASSERT_NEAR(appliedLocal[i], appliedGlobal[i] + double(residual[i]), 1e-3) << "entry " << i;
  }
}

// Momentum correction (DGC) on 2 ranks by hand: momentum 0.75, density 0.25 (k = 2), exact
// selection, topka, the same gradient twice. Round 1 sends as without momentum. Round 2: rank 0's
// velocity (cleared where it sent) is 0.75 [0, -1, 2, 0.5, 0, 3, 0, 1] + g0 = [8, -1.75, 3.5,
// 0.875, -7, 5.25, 0, 1.75], its residual [8, -2.75, 5.5, 1.375, -7, 8.25, 0, 2.75]: it sends
// {0: 8, 5: 8.25}; rank 1's residual [2.75, 6, -5.5, 0.6875, 2.75, -5, 6.875, 0] sends
// {1: 6, 6: 6.875}.
inline void momentumCorrectionByHand(Transport& t) {
  if(t.size() != 2)
    GTEST_SKIP() << "hand-computed for 2 ranks";
  const std::vector<float> g[2] = {{8, -1, 2, 0.5f, -7, 3, 0, 1}, {1, 6, -2, 0.25f, 1, -5, 2.5f, 0}};
  FlatBuffer grads(cpuDevice(), Type::float32, 8);
  GradientAllreducer reducer(options("topka", 0.25f, "exact", "grad-dropping-momentum: 0.75"), t, {grads.all()}, 1);
  const std::vector<float> expected[2] = {{8, 6, 0, 0, -7, -5, 0, 0}, {8, 6, 0, 0, 0, 8.25f, 6.875f, 0}};
  for(int round = 0; round < 2; ++round) {
    kernels::fromHost(grads.all(), g[t.rank()]);
    reducer.reduce(std::vector<Tensor>{grads.all()});
    EXPECT_EQ(kernels::toHost(grads.all()), expected[round]) << "round " << round;
  }
  ModelState state;
  state.n = 8;
  reducer.saveTo(state);
  if(t.rank() == 0) {
    EXPECT_EQ(state.extras.at("allreduce-velocity.rank0"), std::vector<float>({0, -1.75f, 3.5f, 0.875f, -7, 0, 0, 1.75f}));
    EXPECT_EQ(state.extras.at("allreduce-residual.rank0"), std::vector<float>({0, -2.75f, 5.5f, 1.375f, -7, 0, 0, 2.75f}));
  }
}

// Momentum correction's velocity and the density's warm-up are part of the state a checkpoint
// holds: velocities per rank, like the residuals.
inline void momentumCorrectionVelocityIsSavedPerRank(Transport& t) {
  size_t n = 1000;
  FlatBuffer g(cpuDevice(), Type::float32, n);
  GradientAllreducer reducer(options("topka", 0.05f, "exact", "grad-dropping-momentum: 0.9"), t, {g.all()}, 2);
  kernels::fromHost(g.all(), integerValues(n, unsigned(t.rank())));
  reducer.reduce(std::vector<Tensor>{g.all()});
  ModelState state;
  state.n = n;
  reducer.saveTo(state);
  if(t.rank() != 0)
    return;
  for(int r = 0; r < t.size(); ++r) {
    const std::vector<float>& v = state.extras.at("allreduce-velocity.rank" + std::to_string(r));
    ASSERT_EQ(v.size(), n);
    size_t zeros = 0;
    for(float x : v)
      zeros += x == 0.f;
    EXPECT_GE(zeros, 50u) << "the sent entries' velocity is masked";
    EXPECT_LT(zeros, n) << "the others keep theirs";
  }
}

}  // namespace gradient_allreducer_cases
}  // namespace marian
