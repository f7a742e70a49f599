// marian-graph-demo: trains a small MLP on the graph to separate two interleaved spirals, a
// task no linear model can learn, and prints loss and accuracy as it goes. It exercises the
// whole foundation: parameters in one flat buffer, forward/backward, cross-entropy, Adam.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "common/logging.h"
#include "graph/operators.h"
#include "optimizers/optimizer.h"
#include "tensors/kernels.h"

using namespace marian;

namespace {

struct Dataset {
  std::vector<float> x;  // [n, 2]
  std::vector<int> y;    // [n]
};

Dataset spirals(int perClass, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.08f);
  Dataset d;
  for(int c = 0; c < 2; ++c) {
    for(int i = 0; i < perClass; ++i) {
      float r = float(i) / perClass * 3.f + 0.2f;
      float t = 1.75f * float(i) / perClass * 2.f * float(M_PI) + float(c) * float(M_PI);
      d.x.push_back(r * std::cos(t) + noise(rng));
      d.x.push_back(r * std::sin(t) + noise(rng));
      d.y.push_back(c);
    }
  }
  return d;
}

Expr mlp(ExpressionGraph& g, Expr x, int hidden) {
  auto layer = [&](Expr in, int n, const std::string& name) {
    Expr W = g.param(name + "_W", Shape({in->shape().back(), n}), inits::glorotUniform());
    Expr b = g.param(name + "_b", Shape({1, n}), inits::zeros());
    return affine(in, W, b);
  };
  Expr h = tanh(layer(x, hidden, "l1"));
  h = tanh(layer(h, hidden, "l2"));
  return layer(h, 2, "out");
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = argc > 1 ? std::atoi(argv[1]) : 1000;
  try {
    Dataset data = spirals(200, 42);
    int n = int(data.y.size());
    ExpressionGraph graph(cpuDevice(), /*seed=*/1);
    Adam adam;
    LOG(info, "Two-spirals demo: {} points, MLP 2-64-64-2 (tanh), Adam, {} epochs", n, epochs);
    for(int epoch = 1; epoch <= epochs; ++epoch) {
      graph.clear();
      Expr x = graph.constant(Shape({n, 2}), data.x);
      Expr labels = graph.indices(data.y);
      Expr logits = mlp(graph, x, 64);
      Expr loss = mean(reshape(crossEntropy(logits, labels), Shape({1, n})), -1);
      graph.forward();
      graph.backward(loss);
      adam.update(graph.params().values(), graph.params().grads(), 0.01f);

      if(epoch % 50 == 0 || epoch == 1) {
        std::vector<float> out = kernels::toHost(logits->val());
        int correct = 0;
        for(int i = 0; i < n; ++i)
          correct += (out[2 * i + 1] > out[2 * i]) == (data.y[i] == 1);
        LOG(info, "Ep. {} : Cost {} : accuracy {}%", epoch, kernels::toHost(loss->val())[0],
                  100.0 * correct / n);
      }
    }
    graph.params().save("spirals-model.npz");
    LOG(info, "Saved {} parameters ({} values) to spirals-model.npz",
              graph.params().entries().size(), graph.params().totalSize());
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
