// GradientAllreducer under real MPI (ctest: mpirun -np 2, 3, 4): the path for gradients held as
// device shards (what GPU training uses: select where the shard lives, sum on the host, scatter
// back) gives bitwise the same sums as the host-vector path when the gradient is one shard, for
// every algorithm and selection method; with two shards every rank ends with the same sum.
#include <gtest/gtest.h>
#include <mpi.h>
#include <yaml-cpp/yaml.h>

#include <memory>

#include "comm/allreduce.h"
#include "random_values.h"
#include "tensors/arena.h"
#include "tensors/kernels.h"
#include "training/gradient_allreducer.h"

namespace marian {
namespace {

MpiTransport& mpi() { return *MpiTransport::instance(); }

Options options(const std::string& algo, float density, const std::string& method) {
  return Options(YAML::Load("sparse-allreduce: " + algo + "\ncompression-density: " + std::to_string(density) +
                            "\ntopk-selection: " + method + "\ntopk-reuse-every: 2\noktopk-repartition-every: 2\n"));
}

TEST(GradientAllreducer, DeviceShardPathEqualsTheHostPath) {
  size_t n = 5003;
  for(const std::string& algo : allreduceNames())
    for(float density : {1.f, 0.05f})
      for(std::string method : {"sampled", "exact", "reuse"}) {
        if(density == 1.f && method != "sampled")
          continue;
        SCOPED_TRACE(algo + " density " + std::to_string(density) + " " + method);
        GradientAllreducer host(options(algo, density, method), mpi(), n, 11);
        GradientAllreducer shards(options(algo, density, method), mpi(), n, 11);
        FlatBuffer buffer(cpuDevice(), Type::float32, n);
        for(unsigned round = 0; round < 3; ++round) {
          std::vector<float> g = randomValues(n, 1000 * unsigned(mpi().rank()) + round);
          kernels::fromHost(buffer.all(), g);
          host.reduce(g);
          shards.reduce(std::vector<Tensor>{buffer.all()});
          ASSERT_EQ(kernels::toHost(buffer.all()), g) << "round " << round;
        }
      }
}

TEST(GradientAllreducer, TwoShardsGiveEveryRankTheSameSum) {
  size_t n = 4000;
  for(std::string algo : {"dense", "topka", "gtopk", "oktopk"}) {
    SCOPED_TRACE(algo);
    GradientAllreducer reducer(options(algo, 0.1f, "exact"), mpi(), n, 3);
    FlatBuffer a(cpuDevice(0), Type::float32, 1500), b(cpuDevice(1), Type::float32, n - 1500);
    for(unsigned round = 0; round < 3; ++round) {
      std::vector<float> g = randomValues(n, 77 * unsigned(mpi().rank()) + round);
      kernels::fromHost(a.all(), std::vector<float>(g.begin(), g.begin() + 1500));
      kernels::fromHost(b.all(), std::vector<float>(g.begin() + 1500, g.end()));
      reducer.reduce(std::vector<Tensor>{a.all(), b.all()});
      std::vector<float> sum = kernels::toHost(a.all()), rest = kernels::toHost(b.all());
      sum.insert(sum.end(), rest.begin(), rest.end());
      std::vector<float> low(n), high(n);
      MPI_Allreduce(sum.data(), low.data(), int(n), MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(sum.data(), high.data(), int(n), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
      ASSERT_EQ(low, high) << "round " << round;
      size_t nonzero = 0;
      for(float v : sum)
        nonzero += v != 0.f;
      EXPECT_GT(nonzero, 0u);
      if(algo != "dense") {
        EXPECT_LE(nonzero, size_t(mpi().size()) * (n / 10 + 2));
      }
    }
  }
}

}  // namespace
}  // namespace marian
