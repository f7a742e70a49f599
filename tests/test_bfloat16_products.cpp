// bfloat16 products (--precision bfloat16 float32): the rounding against the hardware's, products
// against exact sums of the rounded inputs, the parameters' rounded copy, every product operator's
// value and gradients within bfloat16's rounding of float32's, and float32 master weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/operators.h"
#include "random_values.h"
#include "tensors/arena.h"
#include "tensors/cpu/bfloat16.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernels.h"
#include "tensors/product_precision.h"

using namespace marian;

namespace {

constexpr double kUnitRoundoff = 1.0 / 256;  // bfloat16: 8 significant bits, rounding to nearest
constexpr double kFloat32Step = 1.0 / (1 << 24);

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double rounded(float f) { return cpu::bfloat16ToFloat(cpu::roundToBfloat16(f)); }

// bfloat16 products run where the CPU has them (oneDNN has no bfloat16 matmul for AVX2 alone)
#define SKIP_WITHOUT_BFLOAT16_PRODUCTS()                                \
  if(std::string why = cpuLacksProductType(ProductType::bfloat16); !why.empty()) \
  GTEST_SKIP() << why

Tensor hostTensor(std::vector<float>& v, Shape s) { return Tensor(v.data(), s, Type::float32, cpuDevice()); }

// op(X) of a row-major [rows x cols] matrix
double at(const std::vector<float>& x, int cols, bool trans, int i, int j, bool round) {
  float v = trans ? x[size_t(j) * cols + i] : x[size_t(i) * cols + j];
  return round ? rounded(v) : double(v);
}

struct Reference {
  std::vector<double> exact, exactOfRounded, absSum;  // absSum: sum over k of |a| |b|
};

Reference reference(const std::vector<float>& A, const std::vector<float>& B, int m, int n, int k, bool tA, bool tB) {
  Reference r;
  int colsA = tA ? m : k, colsB = tB ? k : n;
  for(int i = 0; i < m; ++i)
    for(int j = 0; j < n; ++j) {
      double e = 0, er = 0, s = 0;
      for(int l = 0; l < k; ++l) {
        e += at(A, colsA, tA, i, l, false) * at(B, colsB, tB, l, j, false);
        er += at(A, colsA, tA, i, l, true) * at(B, colsB, tB, l, j, true);
        s += std::fabs(at(A, colsA, tA, i, l, false) * at(B, colsB, tB, l, j, false));
      }
      r.exact.push_back(e), r.exactOfRounded.push_back(er), r.absSum.push_back(s);
    }
  return r;
}

}  // namespace

TEST(Bfloat16, RoundsToNearestEvenAsTheHardware) {
  EXPECT_EQ(cpu::roundToBfloat16(1.f), 0x3f80);
  EXPECT_EQ(cpu::roundToBfloat16(fromBits(0x3f808000)), 0x3f80);  // a tie: to the even neighbour
  EXPECT_EQ(cpu::roundToBfloat16(fromBits(0x3f818000)), 0x3f82);  // a tie: up to the even one
  EXPECT_EQ(cpu::roundToBfloat16(fromBits(0x3f808001)), 0x3f81);  // above the tie
  EXPECT_EQ(cpu::roundToBfloat16(-0.f), 0x8000);
  EXPECT_EQ(cpu::roundToBfloat16(fromBits(0x00000001)), 0x0000);  // denormals to zero
  EXPECT_EQ(cpu::roundToBfloat16(fromBits(0x807fffff)), 0x8000);
  EXPECT_EQ(cpu::roundToBfloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(cpu::roundToBfloat16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to infinity
  EXPECT_TRUE(std::isnan(cpu::bfloat16ToFloat(cpu::roundToBfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(cpu::bfloat16ToFloat(cpu::roundToBfloat16(fromBits(0x7f800001)))));  // a NaN with low bits only
  // the bulk conversion (the CPU's VCVTNEPS2BF16 where it has one) rounds every value as the scalar rule
  std::vector<float> v = randomValues(1003, 5);
  std::mt19937 rng(3);
  for(float& x : v)
    x = fromBits(bitsOf(x) ^ (rng() & 0xffff));  // every pattern of the dropped bits
  v[10] = fromBits(0x3f808000), v[11] = fromBits(0x3f818000), v[12] = 1e-40f, v[13] = -0.f;
  std::vector<uint16_t> bulk(v.size());
  cpu::roundToBfloat16(bulk.data(), v.data(), v.size());
  for(size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(bulk[i], cpu::roundToBfloat16(v[i])) << "value " << v[i] << " at " << i;
  // rounded and widened in one pass (the batched products' operands), to the bit
  std::vector<float> values(v.size());
  cpu::bfloat16Values(values.data(), v.data(), v.size());
  for(size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(bitsOf(values[i]), bitsOf(cpu::bfloat16ToFloat(bulk[i]))) << "value " << v[i] << " at " << i;
  // and the kernel, both ways
  FlatBuffer low(cpuDevice(), Type::bfloat16, v.size());
  kernels::convert(low.all(), hostTensor(v, Shape({int(v.size())})));
  std::vector<float> back(v.size());
  kernels::convert(hostTensor(back, Shape({int(v.size())})), low.all());
  for(size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(back[i], float(rounded(v[i])));
  // in place (a product's output gradient): the first half of the same memory
  std::vector<float> same = v;
  Tensor f32 = hostTensor(same, Shape({int(same.size())}));
  kernels::convert(Tensor(f32.data, f32.shape, Type::bfloat16, f32.device), f32);
  const uint16_t* inPlace = reinterpret_cast<const uint16_t*>(same.data());
  for(size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(inPlace[i], cpu::roundToBfloat16(v[i])) << "in place, at " << i;
  // adding the rows into sums on the way (an affine layer's bias gradient), in place and not:
  // the same sums as add() to the bit, the same rounding
  for(Shape shape : {Shape({59, 17}), Shape({3, 20, 17}), Shape({1, 17}), Shape({0, 17})})
    for(bool place : {false, true}) {
      SCOPED_TRACE(shape.toString() + (place ? " in place" : ""));
      std::vector<float> rows = randomValues(shape.elements(), 10), sums = randomValues(17, 9), expect = sums;
      kernels::add(hostTensor(expect, Shape({17})), hostTensor(rows, shape));
      std::vector<uint16_t> separate(rows.size()), fused(rows.size());
      cpu::roundToBfloat16(separate.data(), rows.data(), rows.size());
      Tensor src = hostTensor(rows, shape);
      Tensor dst = place ? Tensor(src.data, shape, Type::bfloat16, src.device)
                         : Tensor(fused.data(), shape, Type::bfloat16, src.device);
      kernels::convert(dst, src, hostTensor(sums, Shape({17})));
      for(size_t j = 0; j < sums.size(); ++j)
        ASSERT_EQ(bitsOf(sums[j]), bitsOf(expect[j])) << "sum " << j;
      const uint16_t* out = place ? reinterpret_cast<const uint16_t*>(rows.data()) : fused.data();
      for(size_t i = 0; i < separate.size(); ++i)
        ASSERT_EQ(out[i], separate[i]) << "at " << i;
    }
}

// C = alpha op(A) op(B) + beta C with the thread's products in bfloat16: the exact sum of the rounded
// inputs to float32's summation error, and the exact product to bfloat16's rounding of both inputs.
TEST(Bfloat16, ProductsSumTheRoundedInputsInFloat32) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  struct Case { int m, n, k; };
  for(int threads : {1, 2}) {
    cpu::setKernelThreads(threads);
    for(Case c : std::vector<Case>{{1, 1, 1}, {7, 5, 13}, {33, 65, 17}, {130, 66, 257}, {600, 500, 40}, {3, 700, 200}})
      for(int t = 0; t < 4; ++t)
        for(float beta : {0.f, 1.f}) {
          bool tA = t & 1, tB = t & 2;
          SCOPED_TRACE(testing::Message() << c.m << "x" << c.n << "x" << c.k << " transA " << tA << " transB " << tB
                                          << " beta " << beta << " threads " << threads);
          std::vector<float> A = randomValues(size_t(c.m) * c.k, 1), B = randomValues(size_t(c.k) * c.n, 2),
                             C0 = randomValues(size_t(c.m) * c.n, 3), C = C0;
          float alpha = 0.75f;
          {
            ProductPrecisionScope scope(ProductType::bfloat16);
            kernels::gemm(hostTensor(C, Shape({c.m, c.n})), hostTensor(A, tA ? Shape({c.k, c.m}) : Shape({c.m, c.k})),
                          hostTensor(B, tB ? Shape({c.n, c.k}) : Shape({c.k, c.n})), tA, tB, alpha, beta);
          }
          Reference r = reference(A, B, c.m, c.n, c.k, tA, tB);
          double summing = (c.k + 2) * kFloat32Step, rounding = 2 * kUnitRoundoff + kUnitRoundoff * kUnitRoundoff;
          for(size_t i = 0; i < C.size(); ++i) {
            double add = beta * C0[i], scale = std::fabs(alpha) * r.absSum[i] * (1 + rounding) + std::fabs(add);
            ASSERT_NEAR(C[i], alpha * r.exactOfRounded[i] + add, summing * scale + 1e-30) << "at " << i;
            ASSERT_NEAR(C[i], alpha * r.exact[i] + add, (rounding + summing) * scale + 1e-30) << "at " << i;
          }
        }
  }
  cpu::setKernelThreads(1);
}

TEST(Bfloat16, BatchedProductsBroadcastAndSum) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  ProductPrecisionScope scope(ProductType::bfloat16);
  const int batch = 5, m = 9, k = 11, n = 7;
  struct Case { int batchA, batchB, batchC; };
  for(int threads : {1, 2}) {
    cpu::setKernelThreads(threads);
    for(Case c : std::vector<Case>{{batch, batch, batch}, {batch, 1, batch}, {1, batch, batch}, {batch, batch, 1}})
      for(int t = 0; t < 4; ++t) {
        bool tA = t & 1, tB = t & 2;
        SCOPED_TRACE(testing::Message() << "batches " << c.batchA << "," << c.batchB << "," << c.batchC << " transA " << tA
                                        << " transB " << tB << " threads " << threads);
        std::vector<float> A = randomValues(size_t(c.batchA) * m * k, 4), B = randomValues(size_t(c.batchB) * k * n, 5),
                           C(size_t(c.batchC) * m * n, 0.5f);
        kernels::gemmBatched(hostTensor(C, Shape({c.batchC, m, n})),
                             hostTensor(A, tA ? Shape({c.batchA, k, m}) : Shape({c.batchA, m, k})),
                             hostTensor(B, tB ? Shape({c.batchB, n, k}) : Shape({c.batchB, k, n})), tA, tB, 2.f, 1.f);
        std::vector<double> expect(C.size(), 0.5), scale(C.size(), 0.5);
        for(int b = 0; b < batch; ++b) {
          std::vector<float> a(A.begin() + (c.batchA == 1 ? 0 : b) * m * k, A.begin() + ((c.batchA == 1 ? 0 : b) + 1) * m * k);
          std::vector<float> bb(B.begin() + (c.batchB == 1 ? 0 : b) * k * n, B.begin() + ((c.batchB == 1 ? 0 : b) + 1) * k * n);
          Reference r = reference(a, bb, m, n, k, tA, tB);
          size_t off = size_t(c.batchC == 1 ? 0 : b) * m * n;
          for(int i = 0; i < m * n; ++i)
            expect[off + i] += 2 * r.exactOfRounded[i], scale[off + i] += 2 * r.absSum[i] * 1.01;
        }
        for(size_t i = 0; i < C.size(); ++i)
          ASSERT_NEAR(C[i], expect[i], (batch * k + 4) * kFloat32Step * scale[i]) << "at " << i;
      }
  }
  cpu::setKernelThreads(1);
}

// Batches of products of their own operands (attention's): every shape, batch, transpose, scale
// and beta, float32 or bfloat16 inputs, a batch cut over two threads, an empty sum.
TEST(Bfloat16, BatchedProductsOfEveryShapeScaleAndBeta) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  ProductPrecisionScope scope(ProductType::bfloat16);
  struct Case { int m, n, k; };
  auto check = [](int batch, Case c, bool tA, bool tB, float alpha, float beta, bool bfloat16Inputs) {
    SCOPED_TRACE(testing::Message() << batch << " x " << c.m << "x" << c.n << "x" << c.k << " transA " << tA << " transB "
                                    << tB << " alpha " << alpha << " beta " << beta << " bfloat16 " << bfloat16Inputs);
    size_t sizeA = size_t(c.m) * c.k, sizeB = size_t(c.k) * c.n, sizeC = size_t(c.m) * c.n;
    std::vector<float> A = randomValues(batch * sizeA, 6), B = randomValues(batch * sizeB, 7),
                       C0 = randomValues(batch * sizeC, 8), C = C0;
    Shape shapeA = tA ? Shape({batch, c.k, c.m}) : Shape({batch, c.m, c.k});
    Shape shapeB = tB ? Shape({batch, c.n, c.k}) : Shape({batch, c.k, c.n});
    std::vector<uint16_t> a16(A.size()), b16(B.size());
    for(size_t i = 0; i < A.size(); ++i)
      a16[i] = cpu::roundToBfloat16(A[i]);
    for(size_t i = 0; i < B.size(); ++i)
      b16[i] = cpu::roundToBfloat16(B[i]);
    Tensor tensorA = bfloat16Inputs ? Tensor(a16.data(), shapeA, Type::bfloat16, cpuDevice()) : hostTensor(A, shapeA);
    Tensor tensorB = bfloat16Inputs ? Tensor(b16.data(), shapeB, Type::bfloat16, cpuDevice()) : hostTensor(B, shapeB);
    kernels::gemmBatched(hostTensor(C, Shape({batch, c.m, c.n})), tensorA, tensorB, tA, tB, alpha, beta);
    for(int b = 0; b < batch; ++b) {
      std::vector<float> a(A.begin() + b * sizeA, A.begin() + (b + 1) * sizeA);
      std::vector<float> bb(B.begin() + b * sizeB, B.begin() + (b + 1) * sizeB);
      Reference r = reference(a, bb, c.m, c.n, c.k, tA, tB);
      for(size_t i = 0; i < sizeC; ++i) {
        size_t at = b * sizeC + i;
        double add = beta * C0[at], scale = std::fabs(alpha) * r.absSum[i] * 1.01 + std::fabs(add);
        ASSERT_NEAR(C[at], alpha * r.exactOfRounded[i] + add, (c.k + 4) * kFloat32Step * scale + 1e-30) << "at " << at;
      }
    }
  };
  for(int threads : {1, 2}) {
    cpu::setKernelThreads(threads);
    for(int batch : {1, 3, 8})
      for(Case c : std::vector<Case>{{1, 1, 1}, {9, 7, 11}, {20, 64, 20}, {13, 13, 64}, {5, 3, 0}})
        for(int t = 0; t < 4; ++t)
          for(float alpha : {1.f, 0.125f})
            for(float beta : {0.f, 1.f})
              for(bool bfloat16Inputs : {false, true})
                check(batch, c, t & 1, t & 2, alpha, beta, bfloat16Inputs);
  }
  cpu::setKernelThreads(1);
}

// A float32 operand inside the scope's parameters is read from their rounded copy (made once per
// forward by the graph), not rounded again; a bfloat16 tensor is read as it is.
TEST(Bfloat16, ProductsReadTheParametersRoundedCopy) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  std::vector<float> params = randomValues(40, 6), A(3 * 4, 1.f), C(3 * 5);
  FlatBuffer copy(cpuDevice(), Type::bfloat16, params.size());
  std::vector<float> twos(params.size(), 2.f);
  kernels::convert(copy.all(), hostTensor(twos, Shape({40})));  // deliberately not the parameters' values
  {
    ProductPrecisionScope scope(ProductType::bfloat16, hostTensor(params, Shape({40})), copy.all());
    Tensor B(params.data() + 20, Shape({4, 5}), Type::float32, cpuDevice());  // parameters 20..39
    kernels::gemm(hostTensor(C, Shape({3, 5})), hostTensor(A, Shape({3, 4})), B, false, false, 1.f, 0.f);
  }
  for(float c : C)
    EXPECT_EQ(c, 8.f);  // 4 products of 1 by the copy's 2
  FlatBuffer lowA(cpuDevice(), Type::bfloat16, A.size());
  std::vector<float> threes(A.size(), 3.f);
  kernels::convert(lowA.all(), hostTensor(threes, Shape({12})));
  std::vector<float> B(4 * 5, 0.5f);
  kernels::gemm(hostTensor(C, Shape({3, 5})), Tensor(lowA.all().data, Shape({3, 4}), Type::bfloat16, cpuDevice()),
                hostTensor(B, Shape({4, 5})), false, false, 1.f, 0.f);  // outside any scope: the type says bfloat16
  for(float c : C)
    EXPECT_EQ(c, 6.f);
}

namespace {
struct Pass {
  std::vector<float> value;
  std::vector<std::vector<float>> grads;
};

// out = op(x...) with the graph's products in `type`, backward seeded with w
Pass runOp(ProductType type, const std::vector<Shape>& shapes, const std::vector<std::vector<float>>& inputs,
           const std::function<Expr(const std::vector<Expr>&)>& op, const std::vector<float>& w) {
  ExpressionGraph graph(cpuDevice(), 7);
  graph.setProductType(type);
  std::vector<Expr> xs;
  for(size_t i = 0; i < shapes.size(); ++i)
    xs.push_back(graph.param("x" + std::to_string(i), shapes[i], inits::fromVector(inputs[i])));
  Expr out = op(xs);
  graph.forward({out}, true);
  graph.backward(out, &w);
  Pass p{kernels::toHost(out->val()), {}};
  for(size_t i = 0; i < shapes.size(); ++i)
    p.grads.push_back(kernels::toHost(graph.params().grad("x" + std::to_string(i))));
  return p;
}

std::vector<float> absolute(std::vector<float> v) {
  for(float& x : v)
    x = std::fabs(x);
  return v;
}

// The operator's value and gradients with bfloat16 products against float32's: each element within
// (2u + u^2 + 3 k 2^-24) times its sum of |products| (u = 2^-8, bfloat16's unit roundoff; k the
// longest sum), which the float32 graph computes exactly as the operator on |inputs| seeded with |w|
// (every operator here is linear in each input). Rounding must show somewhere.
void checkAgainstFloat32(const std::vector<Shape>& shapes, const std::function<Expr(const std::vector<Expr>&)>& op,
                         int longestSum) {
  std::vector<std::vector<float>> inputs, absInputs;
  for(size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(randomValues(shapes[i].elements(), unsigned(10 + i)));
    absInputs.push_back(absolute(inputs.back()));
  }
  size_t outputs;
  {
    ExpressionGraph graph(cpuDevice());
    std::vector<Expr> xs;
    for(size_t i = 0; i < shapes.size(); ++i)
      xs.push_back(graph.param("x" + std::to_string(i), shapes[i], inits::fromVector(inputs[i])));
    outputs = op(xs)->shape().elements();
  }
  std::vector<float> w = randomValues(outputs, 99);
  Pass f32 = runOp(ProductType::float32, shapes, inputs, op, w), bf16 = runOp(ProductType::bfloat16, shapes, inputs, op, w),
       bound = runOp(ProductType::float32, shapes, absInputs, op, absolute(w));
  double factor = 2 * kUnitRoundoff + kUnitRoundoff * kUnitRoundoff + 3 * longestSum * kFloat32Step;
  double largestDifference = 0;
  auto compare = [&](const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& sums,
                     const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for(size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], factor * sums[i] * 1.0001 + 1e-30) << what << " at " << i;
      largestDifference = std::max(largestDifference, double(std::fabs(got[i] - want[i])));
    }
  };
  compare(bf16.value, f32.value, bound.value, "value");
  for(size_t i = 0; i < shapes.size(); ++i)
    compare(bf16.grads[i], f32.grads[i], bound.grads[i], "gradient of input " + std::to_string(i));
  EXPECT_GT(largestDifference, 0) << "no rounding showed: the products did not read bfloat16";
}
}  // namespace

TEST(Bfloat16, GradientsOfEveryProductOperatorWithinBfloat16Rounding) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  for(int t = 0; t < 4; ++t) {
    bool tA = t & 1, tB = t & 2;
    SCOPED_TRACE(testing::Message() << "transA " << tA << " transB " << tB);
    checkAgainstFloat32({tA ? Shape({17, 9}) : Shape({9, 17}), tB ? Shape({11, 17}) : Shape({17, 11})},
                        [&](const std::vector<Expr>& x) { return dot(x[0], x[1], tA, tB, 0.5f); }, 17);
    checkAgainstFloat32({tA ? Shape({3, 13, 6}) : Shape({3, 6, 13}), tB ? Shape({3, 5, 13}) : Shape({3, 13, 5})},
                        [&](const std::vector<Expr>& x) { return bdot(x[0], x[1], tA, tB, 0.25f); }, 3 * 13);
  }
  // a broadcast operand (its gradient sums the batch's products), attention's shape [batch, heads, m, k]
  checkAgainstFloat32({Shape({2, 3, 7, 8}), Shape({8, 6})}, [](const std::vector<Expr>& x) { return bdot(x[0], x[1]); },
                      2 * 3 * 8);
  checkAgainstFloat32({Shape({2, 5, 12}), Shape({12, 10}), Shape({10})},
                      [](const std::vector<Expr>& x) { return affine(x[0], x[1], x[2], false); }, 2 * 5 * 12);
  checkAgainstFloat32({Shape({2, 5, 12}), Shape({10, 12}), Shape({10})},
                      [](const std::vector<Expr>& x) { return affine(x[0], x[1], x[2], true); }, 2 * 5 * 12);
}

// The parameters stay float32: forward and backward leave them as they were, and an update far
// below bfloat16's resolution of a weight (lost if the weights were bfloat16) lands exactly.
TEST(Bfloat16, MasterWeightsStayFloat32) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  ExpressionGraph graph(cpuDevice(), 7);
  graph.setProductType(ProductType::bfloat16);
  std::vector<float> w0 = randomValues(16 * 8, 21), x0 = randomValues(4 * 16, 22);
  Expr x = graph.param("x", Shape({4, 16}), inits::fromVector(x0));
  Expr W = graph.param("W", Shape({16, 8}), inits::fromVector(w0));
  Expr out = dot(x, W);
  graph.forward({out}, true);
  std::vector<float> seed = randomValues(4 * 8, 23);
  graph.backward(out, &seed);
  Tensor values = graph.params().value("W");
  ASSERT_EQ(kernels::toHost(values), w0);  // not rounded by the forward
  std::vector<float> g = kernels::toHost(graph.params().grad("W"));
  float lr = 1e-5f;
  kernels::sgdStep(values, graph.params().grad("W"), lr);
  std::vector<float> after = kernels::toHost(values);
  size_t belowBfloat16 = 0;
  for(size_t i = 0; i < w0.size(); ++i) {
    float want = w0[i] - lr * g[i];
    EXPECT_NEAR(after[i], want, std::fabs(want) * 1.2e-7) << "at " << i;  // float32 to one rounding
    if(after[i] != w0[i] && rounded(after[i]) == rounded(w0[i]))
      ++belowBfloat16;
  }
  EXPECT_GT(belowBfloat16, w0.size() / 2) << "the updates should be below bfloat16's resolution of the weights";
}

// A graph given the caller's rounded copy (useRoundedParameters: one per process, made once per
// update) computes exactly what it computes with its own, and its products read that copy, not
// the parameters: a stale copy shows.
TEST(Bfloat16, GraphsReadTheCallersRoundedCopy) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  std::vector<float> w0 = randomValues(16 * 8, 31), x0 = randomValues(4 * 16, 32);
  ExpressionGraph graph(cpuDevice(), 7);
  graph.setProductType(ProductType::bfloat16);
  Expr W = graph.param("W", Shape({16, 8}), inits::fromVector(w0));
  Expr x = graph.constant({4, 16}, x0);
  auto forward = [&] {
    graph.clear();
    Expr out = dot(graph.constant({4, 16}, x0), graph.param("W", Shape({16, 8}), inits::fromVector(w0)));
    graph.forward({out}, false);
    return kernels::toHost(out->val());
  };
  graph.forward({dot(x, W)}, false);  // allocates the parameters
  std::vector<float> own = forward();
  FlatBuffer copy(cpuDevice(), Type::bfloat16, graph.params().totalSize());
  kernels::convert(copy.all(), graph.params().values());
  graph.useRoundedParameters(copy.all());
  EXPECT_EQ(forward(), own);
  std::vector<float> halves(w0.size(), 0.5f);
  kernels::convert(copy.all(), hostTensor(halves, Shape({int(halves.size())})));  // stale on purpose
  std::vector<float> stale = forward();
  for(int i = 0; i < 4; ++i)
    for(int j = 0; j < 8; ++j) {
      double sum = 0;
      for(int k = 0; k < 16; ++k)
        sum += rounded(x0[size_t(i) * 16 + k]) * 0.5;
      EXPECT_NEAR(stale[size_t(i) * 8 + j], sum, 1e-5) << i << "," << j;
    }
  graph.useRoundedParameters(Tensor());  // its own copy again, rounded by the forward
  EXPECT_EQ(forward(), own);
}

// After forward, a value that backward reads only as a product's operand is kept in bfloat16,
// exactly its float32 value rounded; one that another backward reads (softmax's output), one the
// caller keeps, and every value of a float32 graph stay float32.
TEST(Bfloat16, OnlyProductOperandsAreKeptInBfloat16) {
  SKIP_WITHOUT_BFLOAT16_PRODUCTS();
  struct Kept {
    std::vector<Type> types;
    std::vector<float> hidden;  // the gelu's output as backward's products read it
  };
  auto run = [](ProductType type, bool callerKeepsHidden) {
    ExpressionGraph graph(cpuDevice(), 7);
    graph.setProductType(type);
    Expr x = graph.param("x", Shape({2, 5, 8}), inits::fromVector(randomValues(80, 41)));
    Expr W = graph.param("W", Shape({8, 8}), inits::fromVector(randomValues(64, 42)));
    Expr b = graph.param("b", Shape({8}), inits::fromVector(randomValues(8, 43)));
    Expr hidden = gelu(affine(x, W, b, false));                      // read by products only
    Expr early = reshape(hidden, Shape({2, 5, 8}));                  // a view before its first product
    Expr probs = softmax(bdot(hidden, hidden, false, true));          // softmax's backward reads it
    Expr late = reshape(hidden, Shape({2, 5, 8}));                   // and one after it
    Expr context = bdot(probs, late) + bdot(probs, early);
    Expr out = affine(context, W, b, false) + hidden;                // + reads no value in backward
    std::vector<Expr> keep = {out};
    if(callerKeepsHidden)
      keep.push_back(hidden);
    graph.forward(keep, true);
    std::vector<float> w = randomValues(80, 44);
    graph.backward(out, &w);
    Kept k{{hidden->productVal().type, probs->productVal().type, out->productVal().type}, {}};
    for(Expr view : {early, late}) {  // the owner's copy, at the same place
      EXPECT_EQ(view->productVal().type, hidden->productVal().type);
      EXPECT_EQ(view->productVal().data, hidden->productVal().data);
    }
    Tensor h = hidden->productVal();
    if(h.type == Type::bfloat16) {
      std::vector<uint16_t> bits(h.size());
      std::memcpy(bits.data(), h.data, bits.size() * 2);
      for(uint16_t u : bits)
        k.hidden.push_back(cpu::bfloat16ToFloat(u));
    } else {
      k.hidden = kernels::toHost(h);
    }
    return k;
  };
  Kept bf16 = run(ProductType::bfloat16, false), callers = run(ProductType::bfloat16, true),
       f32 = run(ProductType::float32, false);
  EXPECT_EQ(bf16.types, (std::vector<Type>{Type::bfloat16, Type::float32, Type::float32}));
  EXPECT_EQ(callers.types, (std::vector<Type>{Type::float32, Type::float32, Type::float32}));
  EXPECT_EQ(f32.types, (std::vector<Type>{Type::float32, Type::float32, Type::float32}));
  ASSERT_EQ(bf16.hidden.size(), callers.hidden.size());
  for(size_t i = 0; i < bf16.hidden.size(); ++i)
    EXPECT_EQ(bf16.hidden[i], float(rounded(callers.hidden[i]))) << "at " << i;
}

TEST(Bfloat16, ProductTypesByName) {
  EXPECT_EQ(parseProductType("float32"), ProductType::float32);
  EXPECT_EQ(parseProductType("bfloat16"), ProductType::bfloat16);
  EXPECT_EQ(parseProductType("float16"), ProductType::float16);
  EXPECT_THROW(parseProductType("int8"), std::exception);
  EXPECT_EQ(cpuLacksProductType(ProductType::float32), "");
  EXPECT_NE(cpuLacksProductType(ProductType::float16).find("GPUs only"), std::string::npos);
  std::string bf16 = cpuLacksProductType(ProductType::bfloat16);
  EXPECT_TRUE(bf16.empty() || bf16.find("AVX512-BF16") != std::string::npos) << bf16;
  // GPUs by compute capability: float16 from Volta (7.0), bfloat16 from Ampere (8.0); unknown (0) not refused
  EXPECT_EQ(gpuLacksProductType(ProductType::float16, 70), "");
  EXPECT_EQ(gpuLacksProductType(ProductType::bfloat16, 90), "");
  EXPECT_EQ(gpuLacksProductType(ProductType::bfloat16, 0), "");
  EXPECT_EQ(gpuLacksProductType(ProductType::float32, 35), "");
  EXPECT_EQ(gpuLacksProductType(ProductType::bfloat16, 75),
            "bfloat16 products on a GPU need compute capability 8.0 (Ampere) or later, and this GPU has 7.5");
  EXPECT_NE(gpuLacksProductType(ProductType::float16, 61).find("7.0 (Volta)"), std::string::npos);
}
