// marian-bench-gemm: GFLOP/s of the graph's matrix product (dot node: workspace allocation,
// shape checks, dispatch, cblas) against a raw cblas_sgemm on the same operands, and a check
// that both give the same result. Usage: marian-bench-gemm [reps]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "graph/operators.h"
#include "tensors/cpu/blas_kernels.h"
#include "tensors/kernels.h"

using namespace marian;

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double medianSeconds(F f, int reps) {
  f();  // warm-up: page faults, BLAS thread start
  std::vector<double> t;
  for(int i = 0; i < reps; ++i) {
    double s = seconds();
    f();
    t.push_back(seconds() - s);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 9;
  struct Size { int m, k, n; const char* name; };
  std::vector<Size> sizes = {{512, 512, 512, "512^3"},
                             {1024, 1024, 1024, "1024^3"},
                             {2048, 2048, 2048, "2048^3"},
                             {64 * 13, 256, 1024, "832x256x1024 (transformer FFN)"}};
  std::string switched = cpu::useFastestBlasKernels();  // as training and decoding do
  if(!switched.empty())
    std::printf("# %s\n", switched.c_str());
  std::printf("# OpenBLAS threads: %d, kernels: %s, median of %d runs\n", openblas_get_num_threads(),
              cpu::blasKernels().c_str(), reps);
  std::printf("%-32s %12s %12s %8s %8s\n", "size (m x k x n)", "cblas GF/s", "graph GF/s", "ratio", "check");
  bool allOk = true;
  for(const Size& s : sizes) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n), c(size_t(s.m) * s.n);
    for(float& v : a) v = d(rng);
    for(float& v : b) v = d(rng);

    double raw = medianSeconds([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, a.data(), s.k,
                  b.data(), s.n, 0.f, c.data(), s.n);
    }, reps);

    ExpressionGraph graph;
    Expr A = graph.param("A", {s.m, s.k}, inits::fromVector(a));
    Expr B = graph.param("B", {s.k, s.n}, inits::fromVector(b));
    Expr C = dot(A, B);
    double viaGraph = medianSeconds([&] { graph.forward(); }, reps);

    std::vector<float> fromGraph = kernels::toHost(C->val());
    double maxDiff = 0;
    for(size_t i = 0; i < c.size(); ++i)
      maxDiff = std::max(maxDiff, double(std::fabs(fromGraph[i] - c[i])));
    bool ok = maxDiff <= 1e-4;
    allOk = allOk && ok;
    double flops = 2.0 * s.m * s.k * s.n;
    std::printf("%-32s %12.1f %12.1f %8.3f %8s\n", s.name, flops / raw * 1e-9,
                flops / viaGraph * 1e-9, raw / viaGraph, ok ? "ok" : "WRONG");
  }
  return allOk ? 0 : 1;
}
