// GradientAllreducer under real MPI (ctest: mpirun -np 2, 3, 4): with the gradient in one shard
// it gives bitwise the sums of a reference built from the comm pieces, for every algorithm and
// selection method; with two shards (selected where each lives, summed on the host, scattered
// back) every rank ends with the same sum.
#include <gtest/gtest.h>
#include <mpi.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "comm/allreduce/algorithms.h"
#include "comm/mpi_transport.h"
#include "comm/topk_selection.h"
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

// The reference, from the comm pieces directly: one top-k selector with its residual over the
// whole gradient, the algorithm's sum, the global selection's leftovers back to the residual.
struct Reference {
  std::unique_ptr<Allreduce> algorithm;
  std::unique_ptr<TopkSelector> selector;
  double density;
  Reference(const std::string& algo, double density, const std::string& method, size_t n, uint64_t seed)
      : density(density) {
    AllreduceSettings settings;
    settings.repartitionEvery = 2;
    settings.thresholdEvery = 2;
    algorithm = createAllreduce(algo, mpi(), settings);
    selector = std::make_unique<TopkSelector>(n, parseTopkMethod(method), seed * 7919 + uint64_t(mpi().rank()), 2);
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
TEST(GradientAllreducer, OneShardEqualsTheReference) {
  size_t n = 5003;
  for(const AllreduceEntry& entry : allreduceAlgorithms())
    for(float density : {1.f, 0.05f})
      for(std::string method : {"sampled", "exact", "reuse"}) {
        if(density == 1.f && method != "sampled")
          continue;
        const std::string& algo = entry.name;
        SCOPED_TRACE(algo + " density " + std::to_string(density) + " " + method);
        Reference reference(algo, density, method, n, 11);
        FlatBuffer buffer(cpuDevice(), Type::float32, n);
        GradientAllreducer reducer(options(algo, density, method), mpi(), {buffer.all()}, 11);
        for(unsigned round = 0; round < 3; ++round) {
          std::vector<float> g = randomValues(n, 1000 * unsigned(mpi().rank()) + round);
          kernels::fromHost(buffer.all(), g);
          reference.reduce(g);
          reducer.reduce(std::vector<Tensor>{buffer.all()});
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
    FlatBuffer first(a, Type::float32, 1500), second(b, Type::float32, n - 1500);
    GradientAllreducer reducer(options(algo, 0.1f, "exact"), mpi(), {first.all(), second.all()}, 3);
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
