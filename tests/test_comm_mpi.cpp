// The parameter server's pieces under real MPI (ctest runs this with mpirun -np 2, 3 and 4):
// shard coverage, exact dense updates, and conservation with gradient and delta dropping.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "comm/server_loop.h"
#include "comm/shard_client.h"
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
  std::vector<std::vector<float>> params;

  // clientDevice: where the clients keep gradients and residuals (exchange through tensors)
  Cluster(int perRank, double keep, const std::string& optimizer, Device clientDevice = cpuDevice())
      : clientsPerRank(perRank) {
    std::vector<float> initial(kTotal);
    for(size_t i = 0; i < kTotal; ++i)
      initial[i] = float(i % 17);
    auto [offset, n] = layout.node(mpi().rank());
    shard = std::make_unique<ServerShard>(
        mpi().rank(), std::vector<float>(initial.begin() + offset, initial.begin() + offset + n), 2,
        [optimizer] { return createOptimizer(optimizer, {}); }, size_t(perRank * mpi().size()), keep, 0.f);
    loop = std::make_unique<ServerLoop>(mpi(), *shard);
    for(int c = 0; c < perRank; ++c) {
      int id = mpi().rank() * perRank + c;
      clients.push_back(std::make_unique<ShardClient>(id, layout, &mpi(), shard.get(), keep, 0, 30.0, id + 1,
                                                      clientDevice));
      params.push_back(initial);
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
};

TEST(ParameterServer, DenseSgdUpdatesAreExactWhateverTheOrder) {
  const int rounds = 5;
  std::vector<float> expected(Cluster::kTotal);
  {
    Cluster cluster(2, 1.0, "sgd");
    for(int r = 0; r < rounds; ++r)
      for(size_t c = 0; c < cluster.clients.size(); ++c)
        cluster.clients[c]->exchange(Cluster::gradients(cluster.clients[c]->id(), r).data(),
                                     cluster.params[c].data(), 1.f);
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
}

// With dropping, through host vectors or through tensors on a device (the GPU path of
// multi-node training: residual, threshold and selection where the gradients live, sparse
// replies scattered into the device's parameters).
void droppingConserves(Device device) {
  const int rounds = 6, perRank = 2;
  bool tensors = device != cpuDevice();
  Cluster cluster(perRank, 0.05, "adam", tensors ? device : cpuDevice());
  std::vector<std::unique_ptr<FlatBuffer>> grads, params;
  for(int c = 0; c < perRank && tensors; ++c) {
    grads.push_back(std::make_unique<FlatBuffer>(device, Type::float32, Cluster::kTotal));
    params.push_back(std::make_unique<FlatBuffer>(device, Type::float32, Cluster::kTotal));
    kernels::fromHost(params.back()->all(), cluster.params[size_t(c)]);
  }
  std::vector<std::vector<double>> computed(perRank, std::vector<double>(Cluster::kTotal, 0.0));
  for(int r = 0; r < rounds; ++r)
    for(int c = 0; c < perRank; ++c) {
      std::vector<float> g = Cluster::gradients(cluster.clients[c]->id(), r);
      for(size_t i = 0; i < g.size(); ++i)
        computed[c][i] += g[i];
      if(tensors) {
        kernels::fromHost(grads[size_t(c)]->all(), g);
        cluster.clients[c]->exchange(grads[size_t(c)]->all(), params[size_t(c)]->all(), 0.01f);
      } else {
        cluster.clients[c]->exchange(g.data(), cluster.params[c].data(), 0.01f);
      }
    }
  for(int c = 0; c < perRank && tensors; ++c)
    cluster.params[size_t(c)] = kernels::toHost(params[size_t(c)]->all());
  // (sum of gradients sent) + residual == (sum of gradients computed)
  for(int c = 0; c < perRank; ++c) {
    const auto& sent = cluster.clients[c]->sentTotal();
    const std::vector<float> residual = cluster.clients[c]->residual();
    size_t sentEntries = 0;
    for(size_t i = 0; i < Cluster::kTotal; ++i) {
      EXPECT_NEAR(double(sent[i]) + residual[i], computed[c][i], 1e-3) << "client " << c << " at " << i;
      sentEntries += sent[i] != 0.f;
    }
    EXPECT_GT(sentEntries, 0u);
    EXPECT_LT(sentEntries, Cluster::kTotal);  // dropping dropped
  }
  mpi().barrier(60, "all pushes");
  // every client's parameters equal the record each server keeps of what it sent that client
  int clients = perRank * mpi().size();
  std::vector<float> all(size_t(clients) * Cluster::kTotal);
  std::vector<float> mine;
  for(auto& p : cluster.params)
    mine.insert(mine.end(), p.begin(), p.end());
  MPI_Allgather(mine.data(), int(mine.size()), MPI_FLOAT, all.data(), int(mine.size()), MPI_FLOAT, MPI_COMM_WORLD);
  auto [offset, n] = cluster.layout.node(mpi().rank());
  for(int client = 0; client < clients; ++client) {
    std::vector<float> view = cluster.shard->clientView(client);
    for(size_t i = 0; i < n; ++i)
      ASSERT_EQ(view[i], all[size_t(client) * Cluster::kTotal + offset + i]) << "client " << client;
  }
}

TEST(ParameterServer, DroppingConservesGradientsAndClientsMatchTheServersRecord) { droppingConserves(cpuDevice()); }

// The same through the tensor interface: on a second CPU device here, on GPU 0 where one is visible.
TEST(ParameterServer, DroppingThroughDeviceTensorsConservesToo) {
  droppingConserves(cpuDevice(1));
  if(gpuDeviceCount() > 0)
    droppingConserves(gpuDevice(0));
}

}  // namespace
}  // namespace marian
