#pragma once
// defines: GpuParity, the fixture of the CPU-against-GPU kernel tests (test_gpu_parity*.cpp): the
// same values in a CPU and a GPU tensor, compared element by element; a second CPU device in the
// GPU's place under MARIAN_PARITY_AGAINST=cpu, skipped where neither is there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "random_values.h"
#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {
namespace parity {

class GpuParity : public ::testing::Test {
protected:
  void SetUp() override {
    const char* against = std::getenv("MARIAN_PARITY_AGAINST");
    if(against && std::string(against) == "cpu")
      other_ = cpuDevice(1);
    else if(gpuDeviceCount() == 0)
      GTEST_SKIP() << "no GPU visible (this build has the GPU backend: " << gpuBackendCompiled() << ")";
  }

  // The same values in a CPU and a GPU tensor.
  struct Twin {
    Tensor cpu, gpu;
  };
  Twin twin(const Shape& s, const std::vector<float>& v = {}) {
    Twin t{make(cpuDevice(), s, Type::float32), make(other_, s, Type::float32)};
    if(!v.empty()) {
      kernels::fromHost(t.cpu, v);
      kernels::fromHost(t.gpu, v);
    }
    return t;
  }
  Twin random(const Shape& s, unsigned seed) { return twin(s, randomValues(s.elements(), seed)); }
  Twin positive(const Shape& s, unsigned seed) {
    std::vector<float> v = randomValues(s.elements(), seed);
    for(float& x : v)
      x = 0.5f + std::fabs(x);
    return twin(s, v);
  }
  Twin ints(const std::vector<int>& v) {
    Shape s({int(v.size())});
    Twin t{make(cpuDevice(), s, Type::int32), make(other_, s, Type::int32)};
    kernels::fromHostInts(t.cpu, v);
    kernels::fromHostInts(t.gpu, v);
    return t;
  }

  // |gpu - cpu| <= tol * (1 + |cpu|) element by element; tol 0 asks for bitwise equality.
  static void expectSame(const Twin& t, float tol, const std::string& what) {
    std::vector<float> c = kernels::toHost(t.cpu), g = kernels::toHost(t.gpu);
    ASSERT_EQ(c.size(), g.size());
    size_t bad = 0;
    for(size_t i = 0; i < c.size(); ++i) {
      bool ok = tol == 0.f ? c[i] == g[i] || (std::isnan(c[i]) && std::isnan(g[i]))
                           : std::fabs(g[i] - c[i]) <= tol * (1.f + std::fabs(c[i]));
      if(!ok && bad++ < 5)
        ADD_FAILURE() << what << ": element " << i << " cpu " << c[i] << " gpu " << g[i];
    }
    EXPECT_EQ(bad, 0u) << what;
  }

  Device other_ = gpuDevice(0);

private:
  Tensor make(Device d, const Shape& s, Type type) {
    buffers_.push_back(std::make_unique<FlatBuffer>(d, type, std::max<size_t>(s.elements(), 1)));
    return buffers_.back()->view(0, s);
  }
  std::vector<std::unique_ptr<FlatBuffer>> buffers_;
};

constexpr float kTol = 2e-5f;

}  // namespace parity
}  // namespace marian
