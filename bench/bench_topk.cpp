// marian-bench-topk: top-k selection on a gradient-like vector (default 25M floats, as a large
// NMT model) at densities 0.01 and 0.001, against one memcpy of the same vector.
//   marian-bench-topk [--size N] [--reps R]
// The vector has layers of different scales (log-uniform over three decades) with heavy-tailed
// values, as gradients do. Per method: median seconds, the ratio to memcpy, and how many entries
// it kept against k. "reuse" applies the exact threshold of one step to the next step's vector (a
// fresh draw from the same distribution), as Ok-Topk does between re-evaluations. Verifies:
// sampled and reuse keep between 0.8k and 1.25k, exact keeps k; exits non-zero otherwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "comm/topk_selection.h"
#include "tensors/kernels.h"

using namespace marian;

namespace {

std::vector<float> gradientLike(size_t n, uint64_t seed, const std::vector<std::pair<size_t, float>>& layers) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<float> heavy(3.f);
  std::vector<float> g(n);
  size_t i = 0;
  for(auto [size, scale] : layers)
    for(size_t j = 0; j < size && i < n; ++j)
      g[i++] = scale * heavy(rng);
  return g;
}

template <class F>
double medianSeconds(int reps, F f) {
  std::vector<double> t;
  for(int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Tensor tensorOf(std::vector<float>& x) { return Tensor(x.data(), Shape({int(x.size())}), Type::float32, cpuDevice()); }

// The selection the trainers make (kernels::takeAbove moves the entries out of the residual);
// the taken entries are put back so that every repetition sees the same vector.
SparseVector selectAbove(std::vector<float>& x, float threshold) {
  SparseVector kept;
  kernels::takeAbove(tensorOf(x), threshold, kept.indices, kept.values);
  kernels::scatterAdd(tensorOf(x), kept.indices, kept.values);
  return kept;
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 25000000;
  int reps = 7;
  for(int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if(k == "--size")
      n = size_t(std::atoll(argv[i + 1]));
    else if(k == "--reps")
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "Unknown option '%s'; use [--size N] [--reps R]\n", k.c_str());
      return 1;
    }
  }
  // layer sizes and scales: drawn once, shared by both steps
  std::mt19937_64 rng(7);
  std::vector<std::pair<size_t, float>> layers;
  for(size_t total = 0; total < n;) {
    size_t size = std::min(n - total, size_t(1) << std::uniform_int_distribution<int>(10, 22)(rng));
    layers.push_back({size, std::pow(10.f, std::uniform_real_distribution<float>(-4.f, -1.f)(rng))});
    total += size;
  }
  std::vector<float> step1 = gradientLike(n, 1, layers), step2 = gradientLike(n, 2, layers);
  std::vector<float> copy(n, 1.f);
  double memcpyS = medianSeconds(reps, [&] { std::memcpy(copy.data(), step2.data(), n * sizeof(float)); });
  std::printf("# n = %zu floats (%.1f MB), %zu layers, median of %d; memcpy %.4f s\n", n, n * 4 / 1e6,
              layers.size(), reps, memcpyS);
  std::printf("%-8s %-8s %10s %10s %10s %8s %s\n", "density", "method", "seconds", "x_memcpy", "kept", "kept/k",
              "check");
  bool ok = true;
  for(double density : {0.01, 0.001}) {
    size_t k = size_t(double(n) * density);
    auto report = [&](const char* method, double s, size_t kept, double lo, double hi) {
      double ratio = double(kept) / double(k);
      bool pass = ratio >= lo && ratio <= hi;
      ok = ok && pass;
      std::printf("%-8g %-8s %10.4f %10.2f %10zu %8.3f %s\n", density, method, s, s / memcpyS, kept, ratio,
                  pass ? "ok" : "FAIL");
    };
    size_t kept = 0;
    double exactS = medianSeconds(std::max(1, reps / 2), [&] {
      kept = selectAbove(step2, kernels::exactThreshold(tensorOf(step2), k)).size();
    });
    report("exact", exactS, kept, 1.0, 1.0001);
    uint64_t sampleSeed = 11;
    double sampledS = medianSeconds(reps, [&] {
      kept = selectAbove(step2, kernels::sampledThreshold(tensorOf(step2), density, sampleSeed++)).size();
    });
    report("sampled", sampledS, kept, 0.8, 1.25);
    float previous = kernels::exactThreshold(tensorOf(step1), k);
    double reuseS = medianSeconds(reps, [&] { kept = selectAbove(step2, previous).size(); });
    report("reuse", reuseS, kept, 0.8, 1.25);
  }
  // the spread of the sampled count over 20 independent samples at the lower density
  {
    size_t k = n / 1000;
    uint64_t sampleSeed = 13;
    double lo = 1e9, hi = 0;
    for(int t = 0; t < 20; ++t) {
      double r = double(selectAbove(step2, kernels::sampledThreshold(tensorOf(step2), 0.001, sampleSeed++)).size()) / double(k);
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    bool pass = lo >= 0.8 && hi <= 1.25;
    ok = ok && pass;
    std::printf("# sampled at 0.001 over 20 samples: kept/k in [%.3f, %.3f] %s\n", lo, hi, pass ? "ok" : "FAIL");
  }
  return ok ? 0 : 2;
}
