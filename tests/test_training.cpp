// End to end: small networks on the graph learn non-linear tasks to a loss bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/operators.h"
#include "optimizers/optimizer.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

Expr layer(ExpressionGraph& g, Expr x, int n, const std::string& name) {
  Expr W = g.param(name + "_W", Shape({x->shape().back(), n}), inits::glorotUniform());
  Expr b = g.param(name + "_b", Shape({1, n}), inits::zeros());
  return affine(x, W, b);
}

// XOR: not linearly separable; one tanh hidden layer, mean cross-entropy.
float trainXor(Optimizer& opt, float lr, int steps) {
  ExpressionGraph g(cpuDevice(), 3);
  std::vector<float> x = {0, 0, 0, 1, 1, 0, 1, 1};
  std::vector<int> y = {0, 1, 1, 0};
  float loss = 0;
  for(int step = 0; step < steps; ++step) {
    g.clear();
    Expr in = g.constant({4, 2}, x);
    Expr logits = layer(g, tanh(layer(g, in, 8, "hidden")), 2, "out");
    Expr ce = mean(reshape(crossEntropy(logits, g.indices(y)), {1, 4}), -1);
    g.forward();
    g.backward(ce);
    opt.update(g.params().values(), g.params().grads(), lr);
    loss = kernels::toHost(ce->val())[0];
  }
  return loss;
}

TEST(Training, XorWithAdam) {
  Adam adam;
  EXPECT_LT(trainXor(adam, 0.05f, 500), 0.01f);
}

TEST(Training, XorWithSgd) {
  Sgd sgd;
  EXPECT_LT(trainXor(sgd, 0.5f, 3000), 0.05f);
}

// A 3-class problem on concentric rings with layer norm, swish and dropout in the network:
// training loss falls below a bound and held-out accuracy is high.
TEST(Training, RingsClassifierWithLayerNormAndDropout) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> angle(0.f, 6.2831853f);
  std::normal_distribution<float> noise(0.f, 0.05f);
  auto sample = [&](int n, std::vector<float>& x, std::vector<int>& y) {
    for(int i = 0; i < n; ++i) {
      int c = i % 3;
      float r = 0.5f + c, t = angle(rng);
      x.push_back(r * std::cos(t) + noise(rng));
      x.push_back(r * std::sin(t) + noise(rng));
      y.push_back(c);
    }
  };
  std::vector<float> xTrain, xTest;
  std::vector<int> yTrain, yTest;
  sample(300, xTrain, yTrain);
  sample(150, xTest, yTest);

  ExpressionGraph g(cpuDevice(), 5);
  Adam adam;
  auto build = [&](const std::vector<float>& x, size_t n, bool train) {
    g.clear();
    Expr in = g.constant({int(n), 2}, x);
    Expr h = layer(g, in, 32, "l1");
    h = swish(layerNorm(h, g.param("ln_gamma", {32}, inits::ones()),
                        g.param("ln_beta", {32}, inits::zeros())));
    if(train)
      h = dropout(h, 0.1f);
    return layer(g, h, 3, "out");
  };
  float loss = 0;
  for(int step = 0; step < 400; ++step) {
    Expr logits = build(xTrain, yTrain.size(), true);
    Expr ce = mean(reshape(crossEntropy(logits, g.indices(yTrain)), {1, int(yTrain.size())}), -1);
    g.forward();
    g.backward(ce);
    adam.update(g.params().values(), g.params().grads(), 0.02f);
    loss = kernels::toHost(ce->val())[0];
  }
  EXPECT_LT(loss, 0.1f);

  Expr logits = build(xTest, yTest.size(), false);
  g.forward();
  std::vector<float> out = kernels::toHost(logits->val());
  int correct = 0;
  for(size_t i = 0; i < yTest.size(); ++i) {
    int best = int(std::max_element(out.begin() + 3 * i, out.begin() + 3 * i + 3) - (out.begin() + 3 * i));
    correct += best == yTest[i];
  }
  EXPECT_GT(double(correct) / yTest.size(), 0.97);
}

}  // namespace
}  // namespace marian
