// marian-commbench: one allreduce algorithm alone, under mpirun, on random sparse data (or
// "onebit", 1-bit Adam's compressed mean with error feedback, on the same data made dense).
//   mpirun -np 4 marian-commbench --algo ssar-split --size 25000000 --density 0.001 [--reps 10]
//     [--segment-bytes B]   (the message size of the pipelined ring and tree)
// Every rank draws k = density*size random indices with integer values; every run is checked,
// bitwise, against what the algorithm must return (the dense sum; for gtopk and oktopk, which keep
// the global top-k of the sum, their definitions; for onebit, the compressed mean in double with
// both sides' errors carried over the repetitions, to 1e-4), computed from all ranks' inputs. Rank 0 prints
// one JSON line: bytes sent and received per rank as the transport counted them (the most any
// rank moved; null for dense, whose messages are MPI_Allreduce's own and never pass the
// transport), median and min seconds (the slowest rank of each repetition), and nccl-tests'
// bandwidths: algbw = 4 size / time, busbw = algbw * 2 (P-1) / P.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/allreduce_reference.h"
#include "comm/allreduce/dense_allreduce.h"
#include "comm/allreduce/onebit.h"
#include "comm/allreduce/segments.h"
#include "comm/mpi_transport.h"
#include "common/error.h"
#include "common/median.h"
#include "common/tool_arguments.h"

using namespace marian;

namespace {

struct Args {
  std::string algo = "ring";
  size_t size = 1000000;
  double density = 0.01;
  int reps = 10;
  AllreduceSettings settings;
  bool help = false;
};

constexpr size_t kOneBitValuesPerScale = 65536;  // a stand-in for a parameter's size (a scale per parameter in training)

const char* kUsage = "[--algo NAME (an --sparse-allreduce name or onebit)] [--size N] [--density D] [--reps R] "
                     "[--segment-bytes B]";

Args parse(int argc, char** argv) {
  Args a;
  for(auto& [name, value] :
      toolArguments(argc, argv, {"--algo", "--size", "--density", "--reps", "--segment-bytes"}, kUsage)) {
    if(name == "--help")
      a.help = true;
    else if(name == "--algo")
      a.algo = value;
    else if(name == "--size")
      a.size = size_t(toolNumber(name, value, 1, double(UINT32_MAX), true));
    else if(name == "--density")
      a.density = toolNumber(name, value, 1e-9, 1, false);
    else if(name == "--segment-bytes")
      a.settings.segmentBytes = size_t(toolNumber(name, value, 4, 1 << 30, true));
    else
      a.reps = int(toolNumber(name, value, 1, 1e6, true));
  }
  return a;
}

SparseVector randomInput(size_t n, double density, int rank) {
  std::mt19937_64 rng(1000 + uint64_t(rank));
  size_t k = std::max<size_t>(1, size_t(double(n) * density));
  std::vector<uint32_t> idx;
  if(k * 4 > n) {  // dense-ish: sample by coin flips
    std::bernoulli_distribution keep(double(k) / double(n));
    for(size_t i = 0; i < n; ++i)
      if(keep(rng))
        idx.push_back(uint32_t(i));
  } else {
    std::set<uint32_t> s;
    std::uniform_int_distribution<uint32_t> d(0, uint32_t(n - 1));
    while(s.size() < k)
      s.insert(d(rng));
    idx.assign(s.begin(), s.end());
  }
  SparseVector v;
  std::uniform_int_distribution<int> value(-100, 100);
  v.indices = idx;
  for(size_t i = 0; i < idx.size(); ++i)
    v.values.push_back(float(value(rng)));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  MpiTransport& mpi = MpiTransport::start(&argc, &argv);
  try {
    Args a = parse(argc, argv);
    if(a.help) {
      if(mpi.rank() == 0)
        std::printf("Usage: mpirun -np N marian-commbench %s\n", kUsage);
      return 0;
    }
    std::vector<SparseVector> inputs;
    for(int r = 0; r < mpi.size(); ++r)
      inputs.push_back(randomInput(a.size, a.density, r));
    const SparseVector& local = inputs[size_t(mpi.rank())];
    size_t k = local.size();  // the global top-k schemes keep as many as one rank brings
    auto densified = [&](const SparseVector& v) {
      std::vector<float> d(a.size, 0.f);
      v.addTo(d.data());
      return d;
    };

    // One repetition: the call (timed), then whether its result is right. The dense algorithms
    // (dense, ring, tree) and onebit reduce the dense vector, as training gives it to them: its
    // making from the sparse input is not timed.
    std::unique_ptr<Allreduce> algo;
    std::function<bool(double&)> repetition;
    std::vector<float> denseInput;  // only for the algorithms that reduce the dense vector
    std::unique_ptr<OneBitReference> oneBitReference;
    auto timed = [&](auto call) {
      mpi.barrier(kCollectiveTimeoutSeconds, "the start of a repetition");
      auto start = std::chrono::steady_clock::now();
      call();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if(a.algo == "onebit") {
      // checked against the reference in double with both sides' errors carried over the repetitions
      std::vector<size_t> starts = segmentStarts({0}, a.size, kOneBitValuesPerScale);
      auto onebit = std::make_unique<OneBitAllreduce>(mpi, a.size, starts);
      denseInput = densified(local);
      oneBitReference = std::make_unique<OneBitReference>(a.size, size_t(mpi.size()), starts);
      std::vector<std::vector<float>> all;
      for(const SparseVector& v : inputs)
        all.push_back(densified(v));
      repetition = [&, all, raw = onebit.get()](double& seconds) {
        std::vector<float> got = denseInput;
        seconds = timed([&] { raw->averageCompressed(got); });
        std::vector<double> want = oneBitReference->average(all);
        for(size_t i = 0; i < got.size(); ++i)
          if(std::fabs(double(got[i]) - want[i]) > 1e-4 * (1.0 + std::fabs(want[i])))
            return false;
        return true;
      };
      algo = std::move(onebit);
    } else {
      algo = createAllreduce(a.algo, mpi, a.settings);
      bool denseAlgorithm = dynamic_cast<DenseAllreduce*>(algo.get()) != nullptr;
      if(denseAlgorithm)
        denseInput = densified(local);
      repetition = [&, denseAlgorithm](double& seconds) {
        AllreduceResult got;
        if(denseAlgorithm) {
          got.isDense = true;
          got.dense = denseInput;
          seconds = timed([&] { algo->sumDense(got.dense); });
        } else {
          seconds = timed([&] { got = algo->reduce(local, a.size, k); });
        }
        return matchesReference(a.algo, got, inputs, a.size, k);
      };
    }
    bool correct = true;
    std::vector<double> times;
    AllreduceBytes total;
    for(int rep = 0; rep <= a.reps; ++rep) {  // rep 0 warms up
      double t = 0;
      correct = repetition(t) && correct;
      AllreduceBytes b = algo->takeBytes();
      double slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if(rep > 0) {
        times.push_back(slowest);
        total.sent += b.sent;
        total.received += b.received;
        total.counted = total.counted && b.counted;
      }
    }
    uint64_t sent = total.sent / uint64_t(a.reps), received = total.received / uint64_t(a.reps), maxSent = 0, maxReceived = 0;
    MPI_Allreduce(&sent, &maxSent, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&received, &maxReceived, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    int ok = correct ? 1 : 0, allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double middle = median(times), best = *std::min_element(times.begin(), times.end());
    int P = mpi.size();
    double algbw = 4.0 * double(a.size) / middle / 1e9;
    auto count = [&](uint64_t bytes) { return total.counted ? std::to_string(bytes) : std::string("null"); };
    if(mpi.rank() == 0)
      std::printf("{\"algo\": \"%s\", \"P\": %d, \"N\": %zu, \"density\": %g, \"bytes_sent\": %s, "
                  "\"bytes_recv\": %s, \"median_s\": %.6f, \"min_s\": %.6f, \"algbw_GBps\": %.4f, "
                  "\"busbw_GBps\": %.4f, \"correct\": %s}\n",
                  a.algo.c_str(), P, a.size, a.density, count(maxSent).c_str(), count(maxReceived).c_str(), middle,
                  best, algbw, algbw * 2.0 * (P - 1) / P, allOk ? "true" : "false");
    return allOk ? 0 : 2;
  } catch(const std::exception& e) {
    mpi.abort(e.what());
  }
}
