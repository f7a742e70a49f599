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
#include "tensors/backend.h"
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

// Two shards on devices a and b (CPU devices here; GPU 0 twice where a GPU is visible, which
// runs the selection, residual and scatter on the GPU).
void twoShardsGiveEveryRankTheSameSum(Device a, Device b) {
  size_t n = 4000;
  for(std::string algo : {"dense", "topka", "gtopk", "oktopk"}) {
    SCOPED_TRACE(algo + " on " + a.toString() + " and " + b.toString());
    GradientAllreducer reducer(options(algo, 0.1f, "exact"), mpi(), n, 3);
    FlatBuffer first(a, Type::float32, 1500), second(b, Type::float32, n - 1500);
    for(unsigned round = 0; round < 3; ++round) {
      std::vector<float> g = randomValues(n, 77 * unsigned(mpi().rank()) + round);
      kernels::fromHost(first.all(), std::vector<float>(g.begin(), g.begin() + 1500));
      kernels::fromHost(second.all(), std::vector<float>(g.begin() + 1500, g.end()));
      reducer.reduce(std::vector<Tensor>{first.all(), second.all()});
      std::vector<float> sum = kernels::toHost(first.all()), rest = kernels::toHost(second.all());
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

TEST(GradientAllreducer, TwoShardsGiveEveryRankTheSameSum) {
  twoShardsGiveEveryRankTheSameSum(cpuDevice(0), cpuDevice(1));
  int gpus = gpuDeviceCount(), anyGpus = 0;
  MPI_Allreduce(&gpus, &anyGpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);  // every rank or none
  if(anyGpus > 0)
    twoShardsGiveEveryRankTheSameSum(gpuDevice(0), gpuDevice(anyGpus > 1 ? 1 : 0));
}

}  // namespace
}  // namespace marian
