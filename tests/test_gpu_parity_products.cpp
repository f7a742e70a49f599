// The products of tensors/kernels.h on the CPU and on the GPU with the same inputs (the fixture and
// what MARIAN_PARITY_AGAINST=cpu does: gpu_parity.h; the other kernels: test_gpu_parity.cpp):
// float32 with every transpose and batch, TF32 tensor cores only while asked for, and bfloat16 and
// float16 products against the CPU's exact rounding of their inputs (on any host CPU).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <immintrin.h>

#include "gpu_parity.h"
#include "tensors/product_precision.h"

namespace marian {
namespace {

using parity::GpuParity;
using parity::kTol;

TEST_F(GpuParity, GemmAllTransposesAndBatches) {
  int m = 37, k = 65, n = 29;
  for(bool ta : {false, true})
    for(bool tb : {false, true}) {
      Twin A = random(ta ? Shape{k, m} : Shape{m, k}, 7), B = random(tb ? Shape{n, k} : Shape{k, n}, 8);
      Twin C = random({m, n}, 9);
      kernels::gemm(C.cpu, A.cpu, B.cpu, ta, tb, 0.7f, 0.3f);
      kernels::gemm(C.gpu, A.gpu, B.gpu, ta, tb, 0.7f, 0.3f);
      expectSame(C, 1e-4f, std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N"));
    }
  struct Case {
    Shape a, b, c;
    bool ta, tb;
  };
  for(Case q : {Case{{4, 5, 6}, {4, 6, 3}, {4, 5, 3}, false, false},
                Case{{2, 2, 6, 5}, {2, 2, 3, 6}, {2, 2, 5, 3}, true, true},
                Case{{4, 5, 6}, {1, 6, 3}, {4, 5, 3}, false, false},
                Case{{1, 5, 6}, {4, 3, 6}, {4, 5, 3}, false, true},
                Case{{4, 6, 5}, {4, 6, 3}, {1, 5, 3}, true, false}}) {
    Twin A = random(q.a, 10), B = random(q.b, 11), C = random(q.c, 12);
    kernels::gemmBatched(C.cpu, A.cpu, B.cpu, q.ta, q.tb, 1.f, 0.5f);
    kernels::gemmBatched(C.gpu, A.gpu, B.gpu, q.ta, q.tb, 1.f, 0.5f);
    expectSame(C, 1e-4f, "gemmBatched " + q.a.toString() + " x " + q.b.toString());
  }
}

// --tf32: the products run on TF32 tensor cores only while asked for. Compared as a whole
// (|gpu - cpu| / |cpu|, 2-norms): TF32's inputs rounded to 10 mantissa bits put products of
// 1024 terms about 3e-4 from the CPU's, FP32's summation order about 1e-6 (both worked out on
// the CPU by rounding the inputs as TF32 does), so the test also tells that TF32 was used.
TEST_F(GpuParity, GemmOnTf32TensorCoresOnlyWhenAsked) {
  int m = 256, k = 1024, n = 256;
  Twin A = random({m, k}, 31), B = random({k, n}, 32), C = twin({m, n});
  auto relativeError = [](const Twin& t) {
    std::vector<float> c = kernels::toHost(t.cpu), g = kernels::toHost(t.gpu);
    double diff = 0, norm = 0;
    for(size_t i = 0; i < c.size(); ++i) {
      diff += double(g[i] - c[i]) * (g[i] - c[i]);
      norm += double(c[i]) * c[i];
    }
    return std::sqrt(diff / norm);
  };
  kernels::gemm(C.cpu, A.cpu, B.cpu, false, false, 1.f, 0.f);
  setGpuTf32(true);
  kernels::gemm(C.gpu, A.gpu, B.gpu, false, false, 1.f, 0.f);
  setGpuTf32(false);
  EXPECT_LT(relativeError(C), 3e-3) << "gemm on TF32";
  if(other_.type == DeviceType::gpu) {
    EXPECT_GT(relativeError(C), 5e-5) << "--tf32 asked for, but the products have FP32's precision";
  }
  kernels::gemm(C.gpu, A.gpu, B.gpu, false, false, 1.f, 0.f);
  EXPECT_LT(relativeError(C), 1e-5) << "gemm in FP32 after TF32 was turned off";
}

double relativeError(const std::vector<float>& x, const std::vector<float>& y) {
  double diff = 0, norm = 0;
  for(size_t i = 0; i < x.size(); ++i) {
    diff += double(x[i] - y[i]) * (x[i] - y[i]);
    norm += double(y[i]) * y[i];
  }
  return std::sqrt(diff / norm);
}

constexpr int kM = 64, kK = 512, kN = 48;  // the products' shape

// --precision bfloat16: the GPU's products (cuBLAS's fast compute type, inputs rounded on the
// tensor cores, FP32 sums) against the inputs rounded to bfloat16 on the CPU (by the hardware's
// instruction or the same rule in software) and multiplied in FP32: a product of two bfloat16
// values is exact in FP32, so only the order of the sums differs. The rounding must show against
// FP32 products (a relative 2-norm error of about 2e-3 for normal inputs: each input's rounding
// error is about 0.4 of 2^-8 in RMS); the conversion kernel rounds normal values as the CPU's (the
// GPU keeps denormals, the CPU flushes them). Where the CPU has bfloat16 products, they agree too.
TEST_F(GpuParity, GemmInBfloat16Products) {
  std::string cpuLacks = cpuLacksProductType(ProductType::bfloat16);
  if(other_.type != DeviceType::gpu && !cpuLacks.empty())
    GTEST_SKIP() << "against a second CPU device (MARIAN_PARITY_AGAINST=cpu): " << cpuLacks;
  std::vector<float> a = randomValues(size_t(kM) * kK, 41), b = randomValues(size_t(kK) * kN, 42);
  Twin A = twin({kM, kK}, a), B = twin({kK, kN}, b), C = twin({kM, kN}), exact = twin({kM, kN});
  kernels::gemm(exact.cpu, A.cpu, B.cpu, false, false, 1.f, 0.f);
  auto rounded = [](const Tensor& t) {
    FlatBuffer low(cpuDevice(), Type::bfloat16, t.size()), back(cpuDevice(), Type::float32, t.size());
    kernels::convert(low.all(), t.reshaped(Shape({int(t.size())})));
    kernels::convert(back.all(), low.all());
    return kernels::toHost(back.all());
  };
  Twin Ar = twin({kM, kK}, rounded(A.cpu)), Br = twin({kK, kN}, rounded(B.cpu));
  kernels::gemm(C.cpu, Ar.cpu, Br.cpu, false, false, 1.f, 0.f);
  {
    ProductPrecisionScope scope(ProductType::bfloat16);
    kernels::gemm(C.gpu, A.gpu, B.gpu, false, false, 1.f, 0.f);
  }
  expectSame(C, 1e-4f, "gemm with bfloat16 products against the rounded inputs' FP32 product");
  EXPECT_GT(relativeError(kernels::toHost(C.gpu), kernels::toHost(exact.cpu)), 1e-3) << "no bfloat16 rounding";
  if(cpuLacks.empty()) {
    ProductPrecisionScope scope(ProductType::bfloat16);
    kernels::gemm(C.cpu, A.cpu, B.cpu, false, false, 1.f, 0.f);
    expectSame(C, 1e-4f, "gemm with bfloat16 products on both");
  }
  FlatBuffer lowCpu(cpuDevice(), Type::bfloat16, a.size()), lowOther(other_, Type::bfloat16, a.size());
  kernels::convert(lowCpu.all(), A.cpu.reshaped(Shape({int(a.size())})));
  kernels::convert(lowOther.all(), A.gpu.reshaped(Shape({int(a.size())})));
  Twin back = twin({int(a.size())});
  kernels::convert(back.cpu, lowCpu.all());
  kernels::convert(back.gpu, lowOther.all());
  expectSame(back, 0.f, "float32 -> bfloat16 -> float32");
  Twin rowSums = twin({kK}, std::vector<float>(size_t(kK), 0.5f));  // rounding A, its rows added on the way
  kernels::convert(lowCpu.all(), A.cpu, rowSums.cpu);
  kernels::convert(lowOther.all(), A.gpu, rowSums.gpu);
  expectSame(rowSums, 1e-5f, "convert adding rows");
  kernels::convert(back.cpu, lowCpu.all());
  kernels::convert(back.gpu, lowOther.all());
  expectSame(back, 0.f, "float32 -> bfloat16 -> float32, adding rows");
}

// --precision float16 (--fp16): the GPU's products against the inputs rounded with F16C first and
// multiplied in FP32 on the CPU (a relative error of about 3e-4 against FP32 products: 0.4 of 2^-11
// in RMS). Any x86-64 host of a GPU rounds so: it needs nothing of the CPU's bfloat16.
TEST_F(GpuParity, GemmInFloat16Products) {
  if(other_.type != DeviceType::gpu)
    GTEST_SKIP() << "float16 products are the GPU's alone";
  std::vector<float> a = randomValues(size_t(kM) * kK, 41), b = randomValues(size_t(kK) * kN, 42);
  Twin A = twin({kM, kK}, a), B = twin({kK, kN}, b), C = twin({kM, kN}), exact = twin({kM, kN});
  kernels::gemm(exact.cpu, A.cpu, B.cpu, false, false, 1.f, 0.f);
  std::vector<float> a16 = a, b16 = b;
  for(std::vector<float>* v : {&a16, &b16})
    for(float& x : *v)
      x = _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
  Twin A16 = twin({kM, kK}, a16), B16 = twin({kK, kN}, b16);
  kernels::gemm(C.cpu, A16.cpu, B16.cpu, false, false, 1.f, 0.f);
  {
    ProductPrecisionScope scope(ProductType::float16);
    kernels::gemm(C.gpu, A.gpu, B.gpu, false, false, 1.f, 0.f);
  }
  expectSame(C, 1e-4f, "gemm with float16 products");
  EXPECT_GT(relativeError(kernels::toHost(C.gpu), kernels::toHost(exact.cpu)), 1e-4) << "no float16 rounding";
}

}  // namespace
}  // namespace marian
