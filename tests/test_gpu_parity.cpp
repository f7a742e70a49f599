// Every kernel of tensors/kernels.h but the products (test_gpu_parity_products.cpp) on the CPU and
// on the GPU with the same inputs (the fixture: gpu_parity.h): the GPU results must match the CPU
// reference (exactly where the computation is exact: copies, masks, selections, indexing; within
// float rounding elsewhere). Skipped where no GPU is visible.
// MARIAN_PARITY_AGAINST=cpu runs the same cases with a second CPU device in the GPU's place, so
// the harness itself is exercised on machines without a GPU (ctest does that too).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu_parity.h"

namespace marian {
namespace {

using parity::GpuParity;
using parity::kTol;

TEST_F(GpuParity, FillCopyAcrossDevices) {
  Twin a = random({3, 5}, 1), b = twin({3, 5});
  kernels::fill(a.cpu, 0.25f);
  kernels::fill(a.gpu, 0.25f);
  expectSame(a, 0, "fill");
  Twin r = random({3, 5}, 2);
  kernels::copy(b.gpu, r.cpu);  // host -> GPU
  kernels::copy(b.cpu, r.gpu);  // GPU -> host
  expectSame(b, 0, "copy across devices");
  Twin c = twin({15});
  kernels::copy(c.gpu, b.gpu);  // on the GPU, reshaped
  kernels::copy(c.cpu, b.cpu);
  expectSame(c, 0, "copy on the GPU");
  Twin labels = ints({1, 2, 3});  // fill writes floats: an int tensor is refused on both
  EXPECT_THROW(kernels::fill(labels.cpu, 1.f), Error);
  EXPECT_THROW(kernels::fill(labels.gpu, 1.f), Error);
}

TEST_F(GpuParity, AddWithEveryBroadcastPattern) {
  struct Case {
    Shape dst, src;
  };
  for(Case k : {Case{{4, 5}, {4, 5}}, Case{{1, 5}, {4, 5}}, Case{{5}, {4, 5}}, Case{{4, 1}, {4, 5}},
                Case{{2, 1, 4}, {2, 3, 4}}, Case{{1, 3, 1, 5}, {2, 3, 4, 5}},
                Case{{2, 1, 1, 5}, {2, 3, 4, 5}}, Case{{1, 1, 1}, {3, 300, 7}}, Case{{1, 700}, {900, 700}},
                Case{{1, 1, 512}, {4096, 512}}, Case{{70}, {5000, 70}}}) {
    Twin d = random(k.dst, 3), s = random(k.src, 4);
    kernels::add(d.cpu, s.cpu, 0.5f);
    kernels::add(d.gpu, s.gpu, 0.5f);
    // long sums: float rounding grows with the number of terms summed per element
    float tol = k.src.elements() / k.dst.elements() > 1000 ? 1e-3f : 1e-4f;
    expectSame(d, tol, "add " + k.src.toString() + " into " + k.dst.toString());
  }
  Twin d = random({4, 5}, 5), s = random({4, 5}, 6);
  kernels::add(d.cpu, s.cpu);
  kernels::add(d.gpu, s.cpu);  // source on the host
  expectSame(d, kTol, "add from the host");
  Twin bias = random({1, 5}, 7);
  kernels::add(bias.cpu, s.cpu);
  kernels::add(bias.gpu, s.cpu);  // from the host, broadcasting
  expectSame(bias, kTol, "add from the host, broadcasting");
}


TEST_F(GpuParity, UnaryForwardAndBackward) {
  for(UnaryOp op : {UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Square,
                    UnaryOp::Sigmoid, UnaryOp::Tanh, UnaryOp::Relu, UnaryOp::Swish, UnaryOp::Gelu, UnaryOp::ScaleShift}) {
    bool domain = op == UnaryOp::Log || op == UnaryOp::Sqrt;
    Twin x = domain ? positive({7, 33}, 13) : random({7, 33}, 13), y = twin({7, 33});
    Twin dy = random({7, 33}, 14), dx = random({7, 33}, 15);
    kernels::unary(op, y.cpu, x.cpu, 1.5f, -0.5f);
    kernels::unary(op, y.gpu, x.gpu, 1.5f, -0.5f);
    expectSame(y, 1e-5f, "unary " + std::to_string(int(op)));
    kernels::unaryGrad(op, dx.cpu, x.cpu, y.cpu, dy.cpu, true, 1.5f, -0.5f);
    kernels::unaryGrad(op, dx.gpu, x.gpu, y.gpu, dy.gpu, true, 1.5f, -0.5f);
    expectSame(dx, 1e-5f, "unaryGrad " + std::to_string(int(op)));
    kernels::fill(dx.cpu, 7.f);  // what a written gradient held must not matter
    kernels::fill(dx.gpu, std::numeric_limits<float>::quiet_NaN());
    kernels::unaryGrad(op, dx.cpu, x.cpu, y.cpu, dy.cpu, false, 1.5f, -0.5f);  // written
    kernels::unaryGrad(op, dx.gpu, x.gpu, y.gpu, dy.gpu, false, 1.5f, -0.5f);
    expectSame(dx, 1e-5f, "unaryGrad written " + std::to_string(int(op)));
  }
}

TEST_F(GpuParity, BinaryForwardAndBackwardWithBroadcasting) {
  struct Case {
    Shape a, b;
  };
  for(BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Maximum,
                     BinaryOp::Minimum, BinaryOp::MaskFill})
    for(Case k : {Case{{6, 9}, {6, 9}}, Case{{6, 9}, {9}}, Case{{6, 1}, {1, 9}}, Case{{2, 3, 1, 5}, {3, 4, 1}},
                  Case{{1}, {4, 8}}}) {
      Shape out = Shape::broadcast(k.a, k.b);
      Twin a = random(k.a, 16), b = op == BinaryOp::Div ? positive(k.b, 17) : random(k.b, 17);
      if(op == BinaryOp::MaskFill) {
        std::vector<float> mask = kernels::toHost(b.cpu);
        for(float& v : mask)
          v = v > 0 ? 1.f : 0.f;
        b = twin(k.b, mask);
      }
      Twin y = twin(out), dy = random(out, 18), da = random(k.a, 19), db = random(k.b, 20);
      std::string what = "binary " + std::to_string(int(op)) + " " + k.a.toString() + " " + k.b.toString();
      kernels::binary(op, y.cpu, a.cpu, b.cpu);
      kernels::binary(op, y.gpu, a.gpu, b.gpu);
      expectSame(y, 1e-5f, what);
      kernels::binaryGrad(op, da.cpu, db.cpu, a.cpu, b.cpu, dy.cpu);
      kernels::binaryGrad(op, da.gpu, db.gpu, a.gpu, b.gpu, dy.gpu);
      expectSame(da, 1e-4f, what + " da");
      expectSame(db, 1e-4f, what + " db");
    }
}

TEST_F(GpuParity, DropoutMaskIsTheSameOnBothDevices) {
  for(float keep : {0.1f, 0.5f, 0.9f, 1.f}) {
    Twin m = twin({1000, 37});
    kernels::bernoulliMask(m.cpu, keep, 0x1234567890ull);
    kernels::bernoulliMask(m.gpu, keep, 0x1234567890ull);
    expectSame(m, 0, "bernoulliMask");
    Twin x = random({1000, 37}, 48), y = random({1000, 37}, 49);
    for(bool acc : {false, true}) {
      kernels::dropoutMultiply(y.cpu, x.cpu, keep, 77, acc);
      kernels::dropoutMultiply(y.gpu, x.gpu, keep, 77, acc);
      expectSame(y, 0, "dropoutMultiply");
    }
    std::vector<int> rowOf(1000);
    for(size_t r = 0; r < rowOf.size(); ++r)
      rowOf[r] = int((r * 7) % 13);
    Twin maskRowOf = ints(rowOf);
    for(bool acc : {false, true}) {
      kernels::dropoutMultiply(y.cpu, x.cpu, keep, 78, acc, maskRowOf.cpu);
      kernels::dropoutMultiply(y.gpu, x.gpu, keep, 78, acc, maskRowOf.gpu);
      expectSame(y, 0, "dropoutMultiply by mask rows");
    }
  }
}

TEST_F(GpuParity, ReductionsAlongEveryAxis) {
  Shape s{3, 4, 70, 5};
  for(ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
    for(int axis = 0; axis < 4; ++axis) {
      Twin x = random(s, 21), y = twin(s.with(axis, 1)), dy = random(s.with(axis, 1), 22), dx = random(s, 23);
      std::string what = "reduce " + std::to_string(int(op)) + " axis " + std::to_string(axis);
      kernels::reduce(op, y.cpu, x.cpu, axis);
      kernels::reduce(op, y.gpu, x.gpu, axis);
      expectSame(y, 1e-5f, what);
      kernels::reduceGrad(op, dx.cpu, x.cpu, y.cpu, dy.cpu, axis);
      kernels::reduceGrad(op, dx.gpu, x.gpu, y.gpu, dy.gpu, axis);
      expectSame(dx, 1e-5f, what + " grad");
    }
  Shape tall{70000, 2, 3};  // more rows than a grid's y extent
  Twin x = random(tall, 24), y = twin(tall.with(1, 1));
  kernels::reduce(ReduceOp::Sum, y.cpu, x.cpu, 1);
  kernels::reduce(ReduceOp::Sum, y.gpu, x.gpu, 1);
  expectSame(y, 1e-5f, "reduce of 70000 x 2 x 3 along axis 1");
}

TEST_F(GpuParity, SoftmaxLogSoftmaxNarrowAndWideRows) {
  for(Shape s : {Shape{5, 7}, Shape{3, 2, 300}, Shape{4, 9000}}) {
    Twin x = random(s, 24), y = twin(s), l = twin(s), dy = random(s, 25), dx = random(s, 26), dl = random(s, 27);
    kernels::softmax(y.cpu, x.cpu);
    kernels::softmax(y.gpu, x.gpu);
    expectSame(y, 1e-5f, "softmax " + s.toString());
    kernels::logSoftmax(l.cpu, x.cpu);
    kernels::logSoftmax(l.gpu, x.gpu);
    expectSame(l, 1e-5f, "logSoftmax " + s.toString());
    kernels::softmaxGrad(dx.cpu, y.cpu, dy.cpu);
    kernels::softmaxGrad(dx.gpu, y.gpu, dy.gpu);
    expectSame(dx, 1e-5f, "softmaxGrad " + s.toString());
    kernels::logSoftmaxGrad(dl.cpu, l.cpu, dy.cpu);
    kernels::logSoftmaxGrad(dl.gpu, l.gpu, dy.gpu);
    expectSame(dl, 1e-4f, "logSoftmaxGrad " + s.toString());
  }
}

TEST_F(GpuParity, CrossEntropyWithSmoothingAndMask) {
  int rows = 40, vocab = 1500;
  std::vector<int> labels(rows);
  std::vector<float> mask(rows);
  for(int r = 0; r < rows; ++r) {
    labels[r] = (r * 37) % vocab;
    mask[r] = r % 7 == 3 ? 0.f : 1.f;
  }
  for(float eps : {0.f, 0.1f}) {
    Twin x = random({rows, vocab}, 28), loss = twin({rows}), L = ints(labels), M = twin({rows}, mask);
    Twin dloss = random({rows}, 29), dx = random({rows, vocab}, 30);
    kernels::crossEntropy(loss.cpu, x.cpu, L.cpu, M.cpu, eps);
    kernels::crossEntropy(loss.gpu, x.gpu, L.gpu, M.gpu, eps);
    expectSame(loss, 1e-5f, "crossEntropy");
    kernels::crossEntropyGrad(dx.cpu, x.cpu, L.cpu, M.cpu, eps, dloss.cpu, true);
    kernels::crossEntropyGrad(dx.gpu, x.gpu, L.gpu, M.gpu, eps, dloss.gpu, true);
    expectSame(dx, 1e-5f, "crossEntropyGrad");
    kernels::fill(dx.cpu, 7.f);  // what a written gradient held must not matter
    kernels::fill(dx.gpu, std::numeric_limits<float>::quiet_NaN());
    kernels::crossEntropyGrad(dx.cpu, x.cpu, L.cpu, M.cpu, eps, dloss.cpu, false);  // written, masked rows 0
    kernels::crossEntropyGrad(dx.gpu, x.gpu, L.gpu, M.gpu, eps, dloss.gpu, false);
    expectSame(dx, 1e-5f, "crossEntropyGrad written");
  }
  Twin x = random({2, 5}, 31), loss = twin({2}), L = ints({1, 9});  // label 9 of 5 classes
  EXPECT_THROW(
      {
        kernels::crossEntropy(loss.gpu, x.gpu, L.gpu, Tensor(), 0.f);
        kernels::toHost(loss.gpu);  // a GPU kernel reports when the host next waits
      },
      Error);
  Twin dx = twin({2, 5}), dloss = twin({2}, {1.f, 1.f});
  EXPECT_THROW(
      {
        kernels::crossEntropyGrad(dx.gpu, x.gpu, L.gpu, Tensor(), 0.f, dloss.gpu, true);
        kernels::toHost(dx.gpu);
      },
      Error);
}

TEST_F(GpuParity, LayerNormWithAndWithoutScaleAndBias) {
  for(bool affine : {true, false}) {
    Shape s{37, 512};
    Twin x = random(s, 32), y = twin(s), g = random({512}, 33), b = random({512}, 34);
    Twin dy = random(s, 35), dx = random(s, 36), dg = random({512}, 37), db = random({512}, 38);
    Tensor none;
    kernels::layerNorm(y.cpu, x.cpu, affine ? g.cpu : none, affine ? b.cpu : none, 1e-6f);
    kernels::layerNorm(y.gpu, x.gpu, affine ? g.gpu : none, affine ? b.gpu : none, 1e-6f);
    expectSame(y, 1e-4f, "layerNorm");
    kernels::layerNormGrad(dx.cpu, affine ? dg.cpu : none, affine ? db.cpu : none, x.cpu,
                           affine ? g.cpu : none, dy.cpu, 1e-6f);
    kernels::layerNormGrad(dx.gpu, affine ? dg.gpu : none, affine ? db.gpu : none, x.gpu,
                           affine ? g.gpu : none, dy.gpu, 1e-6f);
    expectSame(dx, 1e-4f, "layerNormGrad dx");
    expectSame(dg, 1e-4f, "layerNormGrad dgamma");
    expectSame(db, 1e-4f, "layerNormGrad dbeta");
  }
  Shape s{3000, 256};  // long column sums for dgamma, dbeta; no dx asked for
  Twin x = random(s, 60), g = random({256}, 61), dy = random(s, 62), dg = twin({256}), db = twin({256});
  kernels::layerNormGrad(Tensor(), dg.cpu, db.cpu, x.cpu, g.cpu, dy.cpu, 1e-6f);
  kernels::layerNormGrad(Tensor(), dg.gpu, db.gpu, x.gpu, g.gpu, dy.gpu, 1e-6f);
  expectSame(dg, 1e-3f, "layerNormGrad dgamma over 3000 rows");
  expectSame(db, 1e-3f, "layerNormGrad dbeta over 3000 rows");
}

TEST_F(GpuParity, GatherScatterRowsAndBadIndex) {
  std::vector<int> idx = {3, 0, 3, 7, 1, 3};  // repeats: scatter-add must sum them
  Twin table = random({8, 33}, 39), y = twin({6, 33}), dy = random({6, 33}, 40), dt = random({8, 33}, 41);
  Twin I = ints(idx);
  kernels::gatherRows(y.cpu, table.cpu, I.cpu);
  kernels::gatherRows(y.gpu, table.gpu, I.gpu);
  expectSame(y, 0, "gatherRows");
  kernels::scatterAddRows(dt.cpu, I.cpu, dy.cpu);
  kernels::scatterAddRows(dt.gpu, I.gpu, dy.gpu);
  expectSame(dt, 1e-5f, "scatterAddRows");  // atomics: any order of the repeated rows
  Twin bad = ints({2, 8});
  EXPECT_THROW(
      {
        kernels::gatherRows(y.gpu.slice(0, 66).reshaped({2, 33}), table.gpu, bad.gpu);
        kernels::toHost(y.gpu);
      },
      Error);
}

TEST_F(GpuParity, TransposeAndSlices) {
  struct Case {
    Shape x;
    std::vector<int> perm;
  };
  for(Case k : {Case{{5, 7}, {1, 0}}, Case{{2, 3, 4}, {2, 0, 1}}, Case{{2, 3, 4, 5}, {0, 2, 1, 3}},
                Case{{2, 3, 4, 5}, {3, 1, 0, 2}}})
    for(bool acc : {false, true}) {
      Shape ys = k.x;
      for(size_t i = 0; i < k.perm.size(); ++i)
        ys[int(i)] = k.x[k.perm[i]];
      Twin x = random(k.x, 42), y = random(ys, 43);
      kernels::transpose(y.cpu, x.cpu, k.perm, acc);
      kernels::transpose(y.gpu, x.gpu, k.perm, acc);
      expectSame(y, 1e-6f, "transpose " + k.x.toString());
    }
  for(int axis = 0; axis < 3; ++axis)
    for(bool acc : {false, true}) {
      Shape whole{4, 6, 5}, part = whole.with(axis, 2);
      Twin w = random(whole, 44), p = random(part, 45);
      kernels::insertSlice(w.cpu, p.cpu, axis, 1, acc);
      kernels::insertSlice(w.gpu, p.gpu, axis, 1, acc);
      expectSame(w, 1e-6f, "insertSlice axis " + std::to_string(axis));
      kernels::extractSlice(p.cpu, w.cpu, axis, 2, acc);
      kernels::extractSlice(p.gpu, w.gpu, axis, 2, acc);
      expectSame(p, 1e-6f, "extractSlice axis " + std::to_string(axis));
    }
}

TEST_F(GpuParity, HeadsOfRealPositions) {
  // 3 sentences of 4 positions, 7 real rows; 3 heads of 5
  std::vector<int> rowOf = {0, 1, 2, -1, 3, -1, -1, -1, 4, 5, 6, -1};
  Twin I = ints(rowOf);
  for(bool acc : {false, true}) {
    Twin rows = random({7, 15}, 46), heads = random({3, 3, 4, 5}, 47);
    kernels::headsFromRows(heads.cpu, rows.cpu, I.cpu, acc);
    kernels::headsFromRows(heads.gpu, rows.gpu, I.gpu, acc);
    expectSame(heads, 1e-6f, "headsFromRows");
    kernels::rowsFromHeads(rows.cpu, heads.cpu, I.cpu, acc);
    kernels::rowsFromHeads(rows.gpu, heads.gpu, I.gpu, acc);
    expectSame(rows, 1e-6f, "rowsFromHeads");
  }
}

TEST_F(GpuParity, OptimizerStepsNormAndScale) {
  size_t n = 100003;  // not a multiple of any block size
  Shape s({int(n)});
  Twin p = random(s, 46), g = random(s, 47), m = twin(s), v = twin(s), gt = twin(s), avg = random(s, 48);
  for(uint64_t t = 1; t <= 4; ++t) {  // the variance frozen after step 3
    uint64_t varianceSteps = std::min<uint64_t>(t, 3);
    kernels::adamStep(p.cpu, g.cpu, m.cpu, v.cpu, 1e-3f, 0.9f, 0.98f, 1e-9f, t, varianceSteps, t <= 3);
    kernels::adamStep(p.gpu, g.gpu, m.gpu, v.gpu, 1e-3f, 0.9f, 0.98f, 1e-9f, t, varianceSteps, t <= 3);
  }
  // a step on another gradient with the second moment of a mean over 4 ranks (--local-adam-variance mean)
  kernels::adamStep(p.cpu, avg.cpu, m.cpu, v.cpu, 1e-3f, 0.9f, 0.98f, 1e-9f, 5, 4, true, 4.f);
  kernels::adamStep(p.gpu, avg.gpu, m.gpu, v.gpu, 1e-3f, 0.9f, 0.98f, 1e-9f, 5, 4, true, 4.f);
  expectSame(p, 1e-5f, "adam params");
  expectSame(v, 1e-5f, "adam second moment");
  kernels::sgdStep(p.cpu, g.cpu, 0.1f);
  kernels::sgdStep(p.gpu, g.gpu, 0.1f);
  kernels::adagradStep(p.cpu, g.cpu, gt.cpu, 0.1f, 1e-8f);
  kernels::adagradStep(p.gpu, g.gpu, gt.gpu, 0.1f, 1e-8f);
  kernels::emaStep(avg.cpu, p.cpu, 1e-4f);
  kernels::emaStep(avg.gpu, p.gpu, 1e-4f);
  kernels::scale(p.cpu, 0.5f);
  kernels::scale(p.gpu, 0.5f);
  expectSame(p, 1e-5f, "sgd, adagrad, scale");
  expectSame(avg, 1e-5f, "ema");
  double a = kernels::squaredNorm(g.cpu), b = kernels::squaredNorm(g.gpu);
  EXPECT_NEAR(a, b, 1e-9 * a);
}

TEST_F(GpuParity, GradientDroppingSelectsTheSameEntries) {
  size_t n = 250000;
  Shape s({int(n)});
  Twin residual = random(s, 49), grad = random(s, 50);
  for(double keep : {0.01, 0.001}) {
    kernels::add(residual.cpu, grad.cpu);
    kernels::add(residual.gpu, grad.gpu);
    float tc = kernels::sampledThreshold(residual.cpu, keep, 77), tg = kernels::sampledThreshold(residual.gpu, keep, 77);
    EXPECT_EQ(tc, tg) << "the same sample on both devices";
    size_t k = size_t(double(n) * keep);
    EXPECT_EQ(kernels::exactThreshold(residual.cpu, k), kernels::exactThreshold(residual.gpu, k));
    std::vector<uint32_t> ic, ig;
    std::vector<float> vc, vg;
    kernels::takeAbove(residual.cpu, tc, ic, vc);
    kernels::takeAbove(residual.gpu, tg, ig, vg);
    EXPECT_EQ(ic, ig);
    EXPECT_EQ(vc, vg);
    EXPECT_GT(ic.size(), n * keep * 0.5);
    EXPECT_LT(ic.size(), n * keep * 2);
    expectSame(residual, 0, "residual after takeAbove");
    std::vector<float> back;
    kernels::gatherAt(back, residual.gpu, ig);
    EXPECT_EQ(back, std::vector<float>(ig.size(), 0.f)) << "taken entries leave the residual";
    kernels::scatterAdd(residual.cpu, ic, vc);
    kernels::scatterAdd(residual.gpu, ig, vg);
    expectSame(residual, 0, "residual after scatterAdd");
  }
}

}  // namespace
}  // namespace marian
