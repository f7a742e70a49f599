// Finite-difference gradient checks for every operator, on several shapes, broadcasting
// included. The bound is stated in grad_check.h: 1% relative error (2-norm) per input.
#include "grad_check.h"

namespace marian {
namespace test {
namespace {

using Inputs = std::vector<Expr>;

TEST(Gradients, BinaryWithBroadcasting) {
  struct Case { Shape a, b; };
  std::vector<Case> cases = {{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 3, 4}, {2, 1, 4}},
                             {{2, 1, 4}, {3, 1}}, {{1}, {2, 3}}, {{2, 2, 3, 4}, {2, 1, 3, 1}}};
  for(const Case& c : cases) {
    SCOPED_TRACE(c.a.toString() + " with " + c.b.toString());
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return x[0] + x[1]; });
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return x[0] - x[1]; });
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return x[0] * x[1]; });
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return x[0] / x[1]; },
                   positiveInputs);
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return maximum(x[0], x[1]); },
                   spacedInputs);
    checkGradients({c.a, c.b}, [](ExpressionGraph&, const Inputs& x) { return minimum(x[0], x[1]); },
                   spacedInputs);
  }
}

TEST(Gradients, SameInputTwiceAccumulates) {
  checkGradients({{3, 4}}, [](ExpressionGraph&, const Inputs& x) { return x[0] * x[0] + x[0]; });
}

// A gradient's first writer (the reader recorded last) writes it when it can
// (Node::overwritesFreshChildGrad), the others add: with a product first and an element-wise
// product second, and the other way round; and a product reading one value twice, which must
// add its two contributions (NaN fills what the writer leaves: grad_check.h).
TEST(Gradients, FreshGradientsAreWrittenThenAddedTo) {
  checkGradients({{3, 4}, {4, 5}, {3, 4}}, [](ExpressionGraph&, const Inputs& x) {
    Expr before = x[0] * x[2];
    Expr written = dot(x[0], x[1]);  // x0's first writer, beta 0
    return dot(before, x[1]) + written;
  });
  checkGradients({{3, 4}, {4, 5}, {3, 4}}, [](ExpressionGraph&, const Inputs& x) {
    Expr added = dot(x[0], x[1]);  // beta 1: the element-wise product below wrote first
    Expr after = x[0] * x[2];
    return dot(after, x[1]) + added;
  });
  checkGradients({{3, 4}}, [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[0], false, true); });
  checkGradients({{2, 3, 4}}, [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[0], false, true); });
  checkGradients({{3, 4}, {4, 4}}, [](ExpressionGraph&, const Inputs& x) { return dot(dot(x[0], x[1]), x[1]); });
}

// A parameter's gradient is not zeroed where its first writer overwrites it (a product read last
// in forward): it must hold the sum of every reader's part however stale it was; a node reading
// the parameter twice, through one node or two of its name (an affine layer's input and bias
// too, whose bias part comes first), adds both parts; a parameter only an adding node reads, or
// none, is zeroed; `accumulate` adds to the last backward's gradient.
TEST(Gradients, ParameterGradientsWrittenByTheirFirstWriter) {
  Device device = testDevice();
  if(device.type == DeviceType::gpu && gpuDeviceCount() <= device.id)
    GTEST_SKIP() << "no such GPU visible";
  std::mt19937 rng(11);
  ExpressionGraph g(device, 11);
  std::vector<float> x1 = normalInputs({3, 4}, rng), x2 = normalInputs({3, 4}, rng), w = normalInputs({4, 5}, rng),
                     v = normalInputs({4, 4}, rng), seed = normalInputs({3, 5}, rng), seedV = normalInputs({4, 4}, rng),
                     p = normalInputs({1, 4}, rng), m = normalInputs({4, 4}, rng), seedP = normalInputs({1, 4}, rng);
  Expr added = dot(g.constant({3, 4}, x1), g.param("W", {4, 5}, inits::fromVector(w)));  // W's last writer
  Expr biased = added + g.param("B", {5}, inits::zeros());                               // B: only an add reads it
  Expr out = biased + dot(g.constant({3, 4}, x2), g.param("W", {4, 5}, inits::zeros()));  // W's first writer
  Expr firstV = g.param("V", {4, 4}, inits::fromVector(v));  // (declared first: it sets V's values)
  Expr twice = dot(firstV, g.param("V", {4, 4}, inits::zeros())) + dot(firstV, firstV);
  // P as an affine layer's input and bias: its backward adds the bias gradient before its
  // products write, so P's first would overwrite it where the node counted as reading P once
  Expr firstP = g.param("P", {1, 4}, inits::fromVector(p));
  Expr biasedByItself = affine(firstP, g.param("M", {4, 4}, inits::fromVector(m)), firstP);
  g.param("U", {3}, inits::zeros());  // read by nothing
  Expr top = concat({reshape(out, {15}), reshape(twice, {16}), reshape(biasedByItself, {4})}, 0);
  std::vector<float> topSeed = seed;
  topSeed.insert(topSeed.end(), seedV.begin(), seedV.end());
  topSeed.insert(topSeed.end(), seedP.begin(), seedP.end());

  // by hand, in double: dW = x1^T s + x2^T s, dB = column sums of s, dV = 2 (sV V^T + V^T sV),
  // dP = sP M^T + sP, dM = P^T sP
  std::vector<double> dW(20, 0.0), dB(5, 0.0), dV(16, 0.0), dP(4, 0.0), dM(16, 0.0);
  for(int r = 0; r < 3; ++r)
    for(int k = 0; k < 4; ++k)
      for(int j = 0; j < 5; ++j)
        dW[k * 5 + j] += double(x1[r * 4 + k] + x2[r * 4 + k]) * seed[r * 5 + j];
  for(int r = 0; r < 3; ++r)
    for(int j = 0; j < 5; ++j)
      dB[j] += seed[r * 5 + j];
  for(int i = 0; i < 4; ++i)
    for(int j = 0; j < 4; ++j)
      for(int k = 0; k < 4; ++k)
        dV[i * 4 + j] += 2 * (double(seedV[i * 4 + k]) * v[j * 4 + k] + double(v[k * 4 + i]) * seedV[k * 4 + j]);
  for(int k = 0; k < 4; ++k) {
    dP[k] = seedP[k];
    for(int j = 0; j < 4; ++j) {
      dP[k] += double(seedP[j]) * m[k * 4 + j];
      dM[k * 4 + j] = double(p[k]) * seedP[j];
    }
  }

  Parameters& params = g.params();
  auto expect = [&](const char* name, const std::vector<double>& want, double times) {
    std::vector<float> got = kernels::toHost(params.grad(name));
    ASSERT_EQ(got.size(), want.size());
    for(size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], times * want[i], 1e-4 * (1 + std::abs(times * want[i]))) << name << "[" << i << "]";
  };
  g.forward({top}, /*backwardFollows=*/true);
  for(const char* name : {"W", "B", "V", "P", "M", "U"})  // stale gradients of an earlier update
    kernels::fill(params.grad(name), 7.f);
  g.backward(top, &topSeed);
  expect("W", dW, 1), expect("B", dB, 1), expect("V", dV, 1), expect("P", dP, 1), expect("M", dM, 1);
  expect("U", std::vector<double>(3, 0.0), 1);
  g.forward({top}, /*backwardFollows=*/true);
  g.backward(top, &topSeed, /*accumulate=*/true);
  expect("W", dW, 2), expect("B", dB, 2), expect("V", dV, 2), expect("P", dP, 2), expect("M", dM, 2);
  expect("U", std::vector<double>(3, 0.0), 2);
  g.forward({top}, /*backwardFollows=*/true);
  g.backward(top, &topSeed);
  expect("W", dW, 1), expect("B", dB, 1), expect("V", dV, 1), expect("P", dP, 1), expect("M", dM, 1);
}

TEST(Gradients, MaskFill) {
  // attention scores [batch, heads, query, key] with a key padding mask [batch, 1, 1, key]
  checkGradients({{2, 2, 3, 4}}, [](ExpressionGraph& g, const Inputs& x) {
    Expr mask = g.constant({2, 1, 1, 4}, {1, 1, 1, 0, 1, 1, 0, 0});
    return softmax(maskFill(x[0], mask));
  });
}

TEST(Gradients, Unary) {
  struct Case {
    const char* name;
    std::function<Expr(Expr)> f;
    InputFn inputs;
  };
  std::vector<Case> cases = {
      {"neg", [](Expr x) { return -x; }, normalInputs},
      {"exp", [](Expr x) { return exp(x); }, normalInputs},
      {"log", [](Expr x) { return log(x); }, positiveInputs},
      {"sqrt", [](Expr x) { return sqrt(x); }, positiveInputs},
      {"square", [](Expr x) { return square(x); }, normalInputs},
      {"sigmoid", [](Expr x) { return sigmoid(x); }, normalInputs},
      {"tanh", [](Expr x) { return tanh(x); }, normalInputs},
      {"relu", [](Expr x) { return relu(x); }, spacedInputs},
      {"swish", [](Expr x) { return swish(x); }, normalInputs},
      {"gelu", [](Expr x) { return gelu(x); }, normalInputs},
      {"scale_shift", [](Expr x) { return scaleShift(x, -1.5f, 0.25f); }, normalInputs},
      {"scalar ops", [](Expr x) { return 2.f * (x + 1.f) - 3.f; }, normalInputs},
  };
  for(const Case& c : cases)
    for(Shape s : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}}) {
      SCOPED_TRACE(std::string(c.name) + " " + s.toString());
      checkGradients({s}, [&](ExpressionGraph&, const Inputs& x) { return c.f(x[0]); }, c.inputs);
    }
}

TEST(Gradients, Dot) {
  checkGradients({{3, 4}, {4, 5}}, [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1]); });
  checkGradients({{4, 3}, {4, 5}},
                 [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1], true, false); });
  checkGradients({{3, 4}, {5, 4}},
                 [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1], false, true); });
  checkGradients({{4, 3}, {5, 4}},
                 [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1], true, true, 0.5f); });
  // a 3-D left operand is a matrix of rows: [batch, time, k] x [k, n]
  checkGradients({{2, 3, 4}, {4, 5}}, [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1]); });
}

TEST(Gradients, BatchedDot) {
  for(bool ta : {false, true})
    for(bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transA ") + (ta ? "1" : "0") + " transB " + (tb ? "1" : "0"));
      Shape a = ta ? Shape{2, 4, 3} : Shape{2, 3, 4};
      Shape b = tb ? Shape{2, 5, 4} : Shape{2, 4, 5};
      checkGradients({a, b}, [=](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1], ta, tb, 0.7f); });
    }
  // broadcast batch on either side, and 4-D attention-shaped products
  checkGradients({{2, 3, 4}, {1, 4, 5}}, [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1]); });
  checkGradients({{1, 3, 4}, {3, 4, 2}}, [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1]); });
  checkGradients({{2, 2, 3, 4}, {2, 2, 5, 4}},
                 [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1], false, true); });
}

// One input a constant (no gradient), in either position: the operators whose backward reads
// an input's value only for the other input's gradient (mul, bdot) must not read it when that
// other input needs none (it is released and poisoned), and none may write a gradient there.
TEST(Gradients, OneInputWithoutGradient) {
  for(size_t constant : {size_t(0), size_t(1)}) {
    SCOPED_TRACE("input " + std::to_string(constant) + " a constant");
    auto check = [&](std::vector<Shape> shapes, const BuildFn& build, const InputFn& inputs = normalInputs) {
      checkGradients(shapes, build, inputs, 1e-2f, 1e-2f, 7, {constant});
    };
    check({{3, 4}, {4}}, [](ExpressionGraph&, const Inputs& x) { return x[0] * x[1]; });
    check({{3, 4}, {4}}, [](ExpressionGraph&, const Inputs& x) { return x[0] / x[1]; }, positiveInputs);
    check({{2, 3, 4}, {2, 1, 4}}, [](ExpressionGraph&, const Inputs& x) { return maximum(x[0], x[1]); },
          spacedInputs);
    check({{2, 3, 4}, {2, 1, 4}}, [](ExpressionGraph&, const Inputs& x) { return minimum(x[0], x[1]); },
          spacedInputs);
    check({{2, 3, 4}, {2, 4, 5}}, [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1]); });
    check({{2, 4, 3}, {1, 5, 4}}, [](ExpressionGraph&, const Inputs& x) { return bdot(x[0], x[1], true, true, 0.7f); });
    check({{3, 4}, {4, 5}}, [](ExpressionGraph&, const Inputs& x) { return dot(x[0], x[1]); });
  }
}

TEST(Gradients, Affine) {
  checkGradients({{3, 4}, {4, 5}, {5}},
                 [](ExpressionGraph&, const Inputs& x) { return affine(x[0], x[1], x[2]); });
  checkGradients({{2, 3, 4}, {4, 5}, {1, 5}},
                 [](ExpressionGraph&, const Inputs& x) { return affine(x[0], x[1], x[2]); });
  // tied output layer: x E^T + b with E [vocab, dim]
  checkGradients({{2, 3, 4}, {6, 4}, {1, 6}},
                 [](ExpressionGraph&, const Inputs& x) { return affine(x[0], x[1], x[2], true); });
}

TEST(Gradients, Reductions) {
  Shape s{2, 3, 4};
  for(int axis : {0, 1, 2, -1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    checkGradients({s}, [=](ExpressionGraph&, const Inputs& x) { return sum(x[0], axis); });
    checkGradients({s}, [=](ExpressionGraph&, const Inputs& x) { return mean(x[0], axis); });
    checkGradients({s}, [=](ExpressionGraph&, const Inputs& x) { return max(x[0], axis); },
                   spacedInputs);
  }
  checkGradients({{7}}, [](ExpressionGraph&, const Inputs& x) { return sum(x[0], 0); });
}

TEST(Gradients, SoftmaxAndLogSoftmax) {
  for(Shape s : {Shape{3, 5}, Shape{2, 3, 4}, Shape{1, 1}}) {
    SCOPED_TRACE(s.toString());
    checkGradients({s}, [](ExpressionGraph&, const Inputs& x) { return softmax(x[0]); });
    checkGradients({s}, [](ExpressionGraph&, const Inputs& x) { return logSoftmax(x[0]); });
  }
}

TEST(Gradients, CrossEntropy) {
  for(float smoothing : {0.f, 0.1f}) {
    SCOPED_TRACE("label smoothing " + std::to_string(smoothing));
    checkGradients({{6, 7}}, [=](ExpressionGraph& g, const Inputs& x) {
      return crossEntropy(x[0], g.indices({0, 3, 6, 3, 1, 2}), nullptr, smoothing);
    });
    // [batch, time, vocab] with padding: masked positions contribute nothing
    checkGradients({{2, 3, 5}}, [=](ExpressionGraph& g, const Inputs& x) {
      Expr labels = g.indices({2, 3}, {4, 0, 1, 2, 2, 3});
      Expr mask = g.constant({2, 3}, {1, 1, 0, 1, 0, 0});
      return crossEntropy(x[0], labels, mask, smoothing);
    });
  }
}

TEST(Gradients, LayerNorm) {
  checkGradients({{3, 6}, {6}, {6}}, [](ExpressionGraph&, const Inputs& x) {
    return layerNorm(x[0], x[1], x[2]);
  });
  checkGradients({{2, 3, 4}, {1, 4}}, [](ExpressionGraph&, const Inputs& x) {
    return layerNorm(x[0], x[1], nullptr);
  });
  checkGradients({{4, 5}}, [](ExpressionGraph&, const Inputs& x) {
    return layerNorm(x[0], nullptr, nullptr);
  });
}

TEST(Gradients, Rows) {
  // repeated indices: the table gradient sums both lookups
  checkGradients({{6, 4}}, [](ExpressionGraph& g, const Inputs& x) {
    return tanh(rows(x[0], g.indices({5, 0, 2, 0, 3})));
  });
  checkGradients({{6, 4}}, [](ExpressionGraph& g, const Inputs& x) {
    return rows(x[0], g.indices({2, 3}, {1, 1, 4, 5, 0, 2}));
  });
}

TEST(Gradients, TransposeReshape) {
  checkGradients({{2, 3}}, [](ExpressionGraph&, const Inputs& x) { return transpose(x[0], {1, 0}); });
  checkGradients({{2, 3, 4}}, [](ExpressionGraph&, const Inputs& x) { return transpose(x[0], {2, 0, 1}); });
  checkGradients({{2, 3, 4, 5}},
                 [](ExpressionGraph&, const Inputs& x) { return transpose(x[0], {0, 2, 1, 3}); });
  checkGradients({{2, 3, 4, 5}},
                 [](ExpressionGraph&, const Inputs& x) { return transpose(x[0], {3, 1, 0, 2}); });
  checkGradients({{2, 6}}, [](ExpressionGraph&, const Inputs& x) {
    return tanh(reshape(x[0], {3, 4})) * reshape(x[0], {3, 4});
  });
}

TEST(Gradients, HeadsOfRealPositions) {
  // 2 sentences of 3 positions, 4 real (rows 0-3), 2 heads of 3: rows -> heads -> rows
  std::vector<int> rowOf = {2, 0, -1, 1, 3, -1};
  checkGradients({{4, 6}}, [&](ExpressionGraph& g, const Inputs& x) {
    return tanh(toHeads(x[0], g.indices(rowOf), 2, 2));
  });
  checkGradients({{2, 2, 3, 3}}, [&](ExpressionGraph& g, const Inputs& x) {
    return tanh(fromHeads(x[0], g.indices(rowOf), 4));
  });
}

TEST(Gradients, ConcatSliceSplit) {
  for(int axis : {0, 1, -1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    Shape a{2, 3, 4}, b = a.with(axis, 1), c = a.with(axis, 2);
    checkGradients({a, b, c}, [=](ExpressionGraph&, const Inputs& x) {
      return concat({x[0], x[1], x[2]}, axis);
    });
    checkGradients({a}, [=](ExpressionGraph&, const Inputs& x) { return slice(x[0], axis, 1, 2); });
  }
  checkGradients({{2, 6}}, [](ExpressionGraph&, const Inputs& x) {
    auto parts = split(x[0], -1, 3);
    return parts[0] * parts[1] + parts[2];
  });
}

TEST(Gradients, Dropout) {
  checkGradients({{4, 5}}, [](ExpressionGraph&, const Inputs& x) { return dropout(x[0], 0.3f); });
  // one mask shared over the rows
  checkGradients({{4, 5}}, [](ExpressionGraph&, const Inputs& x) {
    return dropout(x[0], 0.5f, Shape({1, 5}));
  });
  // rows taking rows of one mask (the transformer's positions shared by a batch's sentences)
  checkGradients({{6, 5}}, [](ExpressionGraph& g, const Inputs& x) {
    return dropout(x[0], 0.4f, g.indices({1, 0, 1, 2, 0, 2}));
  });
}

}  // namespace
}  // namespace test
}  // namespace marian
