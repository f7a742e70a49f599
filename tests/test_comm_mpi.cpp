// The parameter server's pieces under real MPI (ctest runs this with mpirun -np 2, 3 and 4):
// shard coverage, exact dense updates, and conservation with gradient and delta dropping.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "comm/mpi_transport.h"
#include "comm/ps/server_loop.h"
#include "comm/ps/shard_client.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

MpiTransport& mpi() { return *MpiTransport::instance(); }

TEST(ShardLayout, ShardsCoverTheVectorExactlyOnce) {
  for(size_t total : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(1001)})
    for(int nodes : {1, 2, 3, 4, 7}) {
      ShardLayout layout{total, nodes};
      std::vector<int> covered(total, 0);
      size_t expectedOffset = 0;
      for(int n = 0; n < nodes; ++n) {
        auto [offset, size] = layout.node(n);
        EXPECT_EQ(offset, expectedOffset);
        EXPECT_LE(size, total / size_t(nodes) + 1);  // uniform to within one value
        for(size_t i = offset; i < offset + size; ++i)
          covered[i]++;
        expectedOffset = offset + size;
      }
      EXPECT_EQ(expectedOffset, total);
      for(int c : covered)
        EXPECT_EQ(c, 1);
    }
}

struct Cluster {
  static constexpr size_t kTotal = 1003;  // not divisible by 2, 3 or 4
  int clientsPerRank;
  ShardLayout layout{kTotal, mpi().size()};
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

  Cluster(int perRank, double keep, const std::string& optimizer, Device clientDevice = cpuDevice())
      : clientsPerRank(perRank) {
    shard = std::make_unique<ServerShard>(
        mpi().rank(), layout.node(mpi().rank()), kTotal, initial(), 2,
        [optimizer] { return createOptimizer(optimizer, {}); }, size_t(perRank * mpi().size()), keep, 0.f);
    loop = std::make_unique<ServerLoop>(mpi(), *shard, [this] {
      ModelState s;
      s.n = kTotal;
      shard->saveTo(s);
      return s;
    });
    for(int c = 0; c < perRank; ++c) {
      int id = mpi().rank() * perRank + c;
      clients.push_back(std::make_unique<ShardClient>(id, layout, &mpi(), shard.get(), keep, 0, 30.0, id + 1,
                                                      clientDevice));
      grads.push_back(std::make_unique<FlatBuffer>(clientDevice, Type::float32, kTotal));
      params.push_back(std::make_unique<FlatBuffer>(clientDevice, Type::float32, kTotal));
      kernels::fromHost(params.back()->all(), initial());
    }
    // no rank may push before every rank has stopped the previous test's server
    mpi().barrier(60, "the start of the test");
  }
  ~Cluster() {
    mpi().barrier(60, "the end of the test");  // every client is done with every server
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

TEST(ParameterServer, DenseSgdUpdatesAreExactWhateverTheOrder) {
  const int rounds = 5;
  Cluster cluster(2, 1.0, "sgd");
  for(int r = 0; r < rounds; ++r)
    for(size_t c = 0; c < cluster.clients.size(); ++c)
      cluster.exchange(c, r, 1.f);
  mpi().barrier(60, "all pushes");
  // params = initial - sum of every client's gradients (SGD, lr 1), bitwise
  auto [offset, n] = cluster.layout.node(mpi().rank());
  std::vector<float> mine = cluster.shard->values(false);
  for(size_t i = 0; i < n; ++i) {
    double v = double((offset + i) % 17);
    for(int client = 0; client < 2 * mpi().size(); ++client)
      for(int r = 0; r < rounds; ++r)
        v -= Cluster::gradients(client, r)[offset + i];
    ASSERT_EQ(mine[i], float(v)) << "at " << offset + i;
  }
}

// Gradient and delta dropping, with the clients' tensors on `device`: with SGD at lr 1 each
// server's parameters are the initial ones minus everything the clients sent, so (integer
// gradients: exact sums) initial - params + every client's residual == every gradient computed;
// and every client's parameters equal the record each server keeps of what it sent that client.
void droppingConserves(Device device) {
  const int rounds = 6, perRank = 2;
  Cluster cluster(perRank, 0.05, "sgd", device);
  for(int r = 0; r < rounds; ++r)
    for(int c = 0; c < perRank; ++c)
      cluster.exchange(size_t(c), r, 1.f);
  mpi().barrier(60, "all pushes");
  int clients = perRank * mpi().size();
  std::vector<float> residuals(Cluster::kTotal, 0.f), all(Cluster::kTotal);
  for(auto& c : cluster.clients) {
    std::vector<float> r = c->residual();
    for(size_t i = 0; i < r.size(); ++i)
      residuals[i] += r[i];
  }
  MPI_Allreduce(residuals.data(), all.data(), int(all.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  auto [offset, n] = cluster.layout.node(mpi().rank());
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

  std::vector<float> params;
  for(auto& p : cluster.params) {
    std::vector<float> h = kernels::toHost(p->all());
    params.insert(params.end(), h.begin(), h.end());
  }
  std::vector<float> everyClient(size_t(clients) * Cluster::kTotal);
  MPI_Allgather(params.data(), int(params.size()), MPI_FLOAT, everyClient.data(), int(params.size()), MPI_FLOAT,
                MPI_COMM_WORLD);
  for(int client = 0; client < clients; ++client) {
    std::vector<float> view = cluster.shard->clientView(client);
    for(size_t i = 0; i < n; ++i)
      ASSERT_EQ(view[i], everyClient[size_t(client) * Cluster::kTotal + offset + i]) << "client " << client;
  }
}

TEST(ParameterServer, DroppingConservesGradientsAndClientsMatchTheServersRecord) { droppingConserves(cpuDevice()); }

// The same with the clients' tensors on a second CPU device here, on GPU 0 where one is visible.
TEST(ParameterServer, DroppingOnAnotherDeviceConservesToo) {
  droppingConserves(cpuDevice(1));
  if(gpuDeviceCount() > 0)
    droppingConserves(gpuDevice(0));
}

// A shard's and a client's state (Adam moments and steps, moving average, views, residuals and
// counts) saved, restored into fresh ones and saved again is the same, value for value.
TEST(ParameterServer, ShardAndClientStateRoundTrips) {
  ModelState first;
  first.n = Cluster::kTotal;
  {
    Cluster cluster(2, 0.1, "adam");
    for(int r = 0; r < 3; ++r)
      for(size_t c = 0; c < cluster.clients.size(); ++c)
        cluster.exchange(c, r, 0.01f);
    mpi().barrier(60, "all pushes");
    cluster.shard->saveTo(first);
    for(auto& c : cluster.clients)
      c->saveTo(first);
  }
  Cluster fresh(2, 0.1, "adam");
  fresh.shard->restoreFrom(first);
  for(auto& c : fresh.clients)
    c->restoreFrom(first, true, first.extras.at("dropping-residual.client" + std::to_string(c->id())));
  ModelState second;
  second.n = Cluster::kTotal;
  fresh.shard->saveTo(second);
  for(auto& c : fresh.clients)
    c->saveTo(second);
  EXPECT_EQ(second.pack(), first.pack());
  EXPECT_FALSE(first.optimizer.empty());
  EXPECT_EQ(first.optimizer.count("adam_mt"), 1u);
}

}  // namespace
}  // namespace marian
