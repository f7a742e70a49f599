#pragma once
// The parameter server's pieces on any Transport, written once: ctest runs them under mpirun
// (test_comm_mpi.cpp) and on ranks that are threads of one process (test_parameter_server_in_process.cpp).
// Exact dense updates, conservation with gradient and delta dropping, and state round trips.
#include <gtest/gtest.h>

#include <random>

#include "comm/ps/server_loop.h"
#include "comm/ps/shard_client.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {
namespace parameter_server_cases {

struct Cluster {
  static constexpr size_t kTotal = 1003;  // not divisible by 2, 3 or 4
  Transport& t;
  int clientsPerRank;
  ShardLayout layout{kTotal, t.size()};
  std::unique_ptr<ServerShard> shard;
  std::unique_ptr<ServerLoop> loop;
  std::vector<std::unique_ptr<ShardClient>> clients;
  // each client's gradients and parameters, on the clients' device
  std::vector<std::unique_ptr<FlatBuffer>> grads, params;

  static std::vector<float> initial() {
    std::vector<float> v(kTotal);
    for(size_t i = 0; i < kTotal; ++i)
      v[i] = float(i % 17);
    return v;
  }

  // compression: what the clients do besides keeping `keep` (momentum, local gradients ...)
  Cluster(Transport& transport, int perRank, double keep, const std::string& optimizer,
          Device clientDevice = cpuDevice(), Compression compression = Compression())
      : t(transport), clientsPerRank(perRank) {
    shard = std::make_unique<ServerShard>(
        t.rank(), layout.node(t.rank()), kTotal, initial(), 2,
        [optimizer] { return createOptimizer(optimizer, {}); }, size_t(perRank * t.size()), keep, 0.f, /*seed=*/1);
    loop = std::make_unique<ServerLoop>(t, *shard, [this] {
      ModelState s;
      s.n = kTotal;
      shard->saveTo(s);
      return s;
    });
    for(int c = 0; c < perRank; ++c) {
      int id = t.rank() * perRank + c;
      compression.keep = keep;
      clients.push_back(std::make_unique<ShardClient>(id, layout, &t, shard.get(), compression, perRank * t.size(), 30.0,
                                                      id + 1, clientDevice));
      grads.push_back(std::make_unique<FlatBuffer>(clientDevice, Type::float32, kTotal));
      params.push_back(std::make_unique<FlatBuffer>(clientDevice, Type::float32, kTotal));
      kernels::fromHost(params.back()->all(), initial());
    }
    // no rank may push before every rank has stopped the previous test's server
    t.barrier(60, "the start of the test");
  }
  ~Cluster() {
    t.barrier(60, "the end of the test");  // every client is done with every server
    loop->stop();
  }
  // Integer-valued gradients: sums are exact in any order.
  static std::vector<float> gradients(int client, int round) {
    std::mt19937 rng(unsigned(client * 1000 + round));
    std::uniform_int_distribution<int> d(-8, 8);
    std::vector<float> g(kTotal);
    for(float& x : g)
      x = float(d(rng));
    return g;
  }
  void exchange(size_t c, int round, float lr) {
    kernels::fromHost(grads[c]->all(), gradients(clients[c]->id(), round));
    clients[c]->exchange(grads[c]->all(), params[c]->all(), lr);
  }
};

inline void denseSgdUpdatesAreExactWhateverTheOrder(Transport& t) {
  const int rounds = 5;
  Cluster cluster(t, 2, 1.0, "sgd");
  for(int r = 0; r < rounds; ++r)
    for(size_t c = 0; c < cluster.clients.size(); ++c)
      cluster.exchange(c, r, 1.f);
  t.barrier(60, "all pushes");
  // params = initial - sum of every client's gradients (SGD, lr 1), bitwise
  auto [offset, n] = cluster.layout.node(t.rank());
  std::vector<float> mine = cluster.shard->values(false);
  for(size_t i = 0; i < n; ++i) {
    double v = double((offset + i) % 17);
    for(int client = 0; client < 2 * t.size(); ++client)
      for(int r = 0; r < rounds; ++r)
        v -= Cluster::gradients(client, r)[offset + i];
    ASSERT_EQ(mine[i], float(v)) << "at " << offset + i;
  }
}

// Gradient and delta dropping, with the clients' tensors on `device`: with SGD at lr 1 each
// server's parameters are the initial ones minus everything the clients sent, so (integer
// gradients: exact sums) initial - params + every client's residual == every gradient computed;
// and every client's parameters equal the record each server keeps of what it sent that client.
inline void droppingConserves(Transport& t, Device device) {
  const int rounds = 6, perRank = 2;
  Cluster cluster(t, perRank, 0.05, "sgd", device);
  for(int r = 0; r < rounds; ++r)
    for(int c = 0; c < perRank; ++c)
      cluster.exchange(size_t(c), r, 1.f);
  t.barrier(60, "all pushes");
  int clients = perRank * t.size();
  std::vector<float> residuals(Cluster::kTotal, 0.f), all(Cluster::kTotal);
  for(auto& c : cluster.clients) {
    std::vector<float> r = c->residual();
    for(size_t i = 0; i < r.size(); ++i)
      residuals[i] += r[i];
  }
  all = residuals;
  t.allreduceSum(all.data(), all.size(), 60, "the residuals");
  auto [offset, n] = cluster.layout.node(t.rank());
  std::vector<float> mine = cluster.shard->values(false);
  size_t moved = 0;
  for(size_t i = 0; i < n; ++i) {
    double computed = 0;
    for(int client = 0; client < clients; ++client)
      for(int r = 0; r < rounds; ++r)
        computed += Cluster::gradients(client, r)[offset + i];
    double sent = double((offset + i) % 17) - double(mine[i]);
    ASSERT_EQ(sent + double(all[offset + i]), computed) << "at " << offset + i;
    moved += mine[i] != float((offset + i) % 17);
  }
  EXPECT_GT(moved, 0u);
  double held = 0;
  for(float r : all)
    held += std::fabs(r);
  EXPECT_GT(held, 0.0);  // dropping dropped

  // every client's parameters on every rank: each rank fills its clients' rows, the sum gathers
  std::vector<float> everyClient(size_t(clients) * Cluster::kTotal, 0.f);
  for(size_t c = 0; c < cluster.params.size(); ++c) {
    std::vector<float> h = kernels::toHost(cluster.params[c]->all());
    std::copy(h.begin(), h.end(), everyClient.begin() + long(size_t(cluster.clients[c]->id()) * Cluster::kTotal));
  }
  t.allreduceSum(everyClient.data(), everyClient.size(), 60, "the clients' parameters");
  for(int client = 0; client < clients; ++client) {
    std::vector<float> view = cluster.shard->clientView(client);
    for(size_t i = 0; i < n; ++i)
      ASSERT_EQ(view[i], everyClient[size_t(client) * Cluster::kTotal + offset + i]) << "client " << client;
  }
}

inline void droppingConservesGradients(Transport& t) { droppingConserves(t, cpuDevice()); }

// The same with the clients' tensors on a second CPU device here, on GPU 0 where one is visible.
inline void droppingOnAnotherDeviceConservesToo(Transport& t) {
  droppingConserves(t, cpuDevice(1));
  if(gpuDeviceCount() > 0)
    droppingConserves(t, gpuDevice(0));
}

// A shard's and a client's state (Adam moments and steps, moving average, views, residuals and
// counts) saved, restored into fresh ones and saved again is the same, value for value.
inline void shardAndClientStateRoundTrips(Transport& t) {
  ModelState first;
  first.n = Cluster::kTotal;
  {
    Cluster cluster(t, 2, 0.1, "adam");
    for(int r = 0; r < 3; ++r)
      for(size_t c = 0; c < cluster.clients.size(); ++c)
        cluster.exchange(c, r, 0.01f);
    t.barrier(60, "all pushes");
    cluster.shard->saveTo(first);
    for(auto& c : cluster.clients)
      c->saveTo(first);
  }
  Cluster fresh(t, 2, 0.1, "adam");
  fresh.shard->restoreFrom(first, true);
  for(auto& c : fresh.clients)
    c->restoreFrom(first, true);
  ModelState second;
  second.n = Cluster::kTotal;
  fresh.shard->saveTo(second);
  for(auto& c : fresh.clients)
    c->saveTo(second);
  EXPECT_EQ(second.pack(), first.pack());
  EXPECT_FALSE(first.optimizer.empty());
  EXPECT_EQ(first.optimizer.count("adam_mt"), 1u);
}

// Local gradients (--local-gradients partial, --local-average-freq 3): a client's `unsent` is
// exactly the change of its residual (what it computed and did not send), and every third
// exchange the replies are the shards' parameters themselves (one rank, sequential clients: the
// client then holds exactly the server's values). The servers' records follow.
inline void localGradientsGiveTheUnsentPartAndResyncEveryThirdExchange(Transport& t) {
  Compression local;
  local.local = LocalGradients::partial;
  local.averageFreq = 3;
  Cluster cluster(t, 2, 0.05, "sgd", cpuDevice(), local);
  FlatBuffer unsent(cpuDevice(), Type::float32, Cluster::kTotal);
  for(int r = 0; r < 6; ++r)
    for(size_t c = 0; c < cluster.clients.size(); ++c) {
      std::vector<float> before = cluster.clients[c]->residual();
      kernels::fromHost(cluster.grads[c]->all(), Cluster::gradients(cluster.clients[c]->id(), r));
      cluster.clients[c]->exchange(cluster.grads[c]->all(), cluster.params[c]->all(), 1.f, unsent.all());
      std::vector<float> after = cluster.clients[c]->residual(), u = kernels::toHost(unsent.all());
      std::vector<float> g = Cluster::gradients(cluster.clients[c]->id(), r);
      size_t held = 0;
      for(size_t i = 0; i < Cluster::kTotal; ++i) {
        ASSERT_EQ(u[i], after[i] - before[i]) << "round " << r << " at " << i;
        held += u[i] != 0.f;
      }
      EXPECT_GT(held, Cluster::kTotal / 2) << "most of the gradient stays local";
      if(t.size() == 1 && r % 3 == 2) {
        EXPECT_EQ(kernels::toHost(cluster.params[c]->all()), cluster.shard->values(false)) << "round " << r;
      }
    }
  t.barrier(60, "all pushes");
  for(int client = 0; client < 2 * t.size(); ++client)  // the servers' records follow the full replies
    if(client / 2 == t.rank()) {
      std::vector<float> view = cluster.shard->clientView(client);
      std::vector<float> mine = kernels::toHost(cluster.params[size_t(client % 2)]->all());
      auto [offset, n] = cluster.layout.node(t.rank());
      for(size_t i = 0; i < n; ++i)
        ASSERT_EQ(view[i], mine[offset + i]) << "client " << client;
    }
}

}  // namespace parameter_server_cases
}  // namespace marian
