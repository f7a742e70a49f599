#pragma once
// defines: checkGradients — compares the graph's analytic gradients with central finite
// differences. The checked function is L = sum(out * W) for a fixed random W (so every output
// element matters with a different weight), computed in double from the float forward pass.
// Bound: for each input, ||analytic - numeric|| / max(||analytic||, ||numeric||, 1e-3) < tol
// (default 1e-2, i.e. 1% relative error in the 2-norm), with step eps = 1e-2.
// The graph runs on MARIAN_TEST_DEVICE (e.g. gpu0; default cpu0): ctest runs every check on the
// CPU and once more on the GPU, where that run reports its cases skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <random>

#include "graph/operators.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {
namespace test {

// Released workspace blocks are filled with NaN in these tests, so that a backward that reads a
// value its operator said it does not need (Node::backwardReadsValue/-Child) fails its check.
inline const bool kPoisonReleasedBlocks = (setenv("MARIAN_POISON_RELEASED", "1", 1), true);

using BuildFn = std::function<Expr(ExpressionGraph&, const std::vector<Expr>&)>;

// Input values: normal by default; ops with kinks or restricted domains pass their own.
// Called once per input, with that input's position in the argument list.
using InputFn = std::function<std::vector<float>(const Shape&, std::mt19937&, size_t input)>;

inline std::vector<float> normalInputs(const Shape& s, std::mt19937& rng, size_t = 0) {
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(s.elements());
  for(float& x : v)
    x = d(rng);
  return v;
}

inline std::vector<float> positiveInputs(const Shape& s, std::mt19937& rng, size_t = 0) {
  std::uniform_real_distribution<float> d(0.5f, 2.f);
  std::vector<float> v(s.elements());
  for(float& x : v)
    x = d(rng);
  return v;
}

// Values on a grid of step 0.1, shifted by 0.025 for even and 0.075 for odd inputs: values of
// one input differ by >= 0.1, of two inputs by >= 0.05, and all are >= 0.025 from 0, so no
// finite-difference step (0.01) crosses a kink of relu, max, maximum or minimum.
inline std::vector<float> spacedInputs(const Shape& s, std::mt19937& rng, size_t input) {
  std::vector<float> v(s.elements());
  float shift = input % 2 ? 0.075f : 0.025f;
  for(size_t i = 0; i < v.size(); ++i)
    v[i] = float(int(i) - int(v.size()) / 2) * 0.1f + shift;
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

inline double weightedSum(const std::vector<float>& out, const std::vector<float>& w) {
  double s = 0;
  for(size_t i = 0; i < out.size(); ++i)
    s += double(out[i]) * double(w[i]);
  return s;
}

inline Device testDevice() {
  const char* d = std::getenv("MARIAN_TEST_DEVICE");
  if(!d || std::string(d).rfind("gpu", 0) != 0)
    return cpuDevice();
  return gpuDevice(std::atoi(d + 3));
}

// constants: the positions of inputs that are graph constants (no gradient) instead of
// parameters, so that the operator runs its paths for an input that needs no gradient (its
// backward must leave that input alone and may not read what only that input's gradient needs:
// such values are released and poisoned); only the other inputs are checked.
inline void checkGradients(const std::vector<Shape>& shapes, const BuildFn& build,
                           const InputFn& inputs = normalInputs, float tol = 1e-2f,
                           float eps = 1e-2f, unsigned seed = 7, const std::vector<size_t>& constants = {}) {
  Device device = testDevice();
  if(device.type == DeviceType::gpu && gpuDeviceCount() <= device.id)
    GTEST_SKIP() << "gradient checks on " << device.toString() << ": no such GPU visible";
  std::mt19937 rng(seed);
  ExpressionGraph graph(device, /*seed=*/seed);
  std::vector<Expr> xs;
  std::vector<std::string> names;
  auto isConstant = [&](size_t i) { return std::find(constants.begin(), constants.end(), i) != constants.end(); };
  for(size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    std::vector<float> v = inputs(shapes[i], rng, i);
    xs.push_back(isConstant(i) ? graph.constant(shapes[i], v) : graph.param(names.back(), shapes[i], inits::fromVector(v)));
  }
  // The operators under test see their inputs and output as workspace values (x * 1 + 0, whose
  // own backward reads no value), run as training runs them: every value their backward does not
  // claim is released, and poisoned, before backward.
  std::vector<Expr> values;
  for(Expr x : xs)
    values.push_back(scaleShift(x, 1.f, 0.f));
  Expr out = build(graph, values);
  Expr top = scaleShift(out, 1.f, 0.f);
  graph.forward({top}, /*backwardFollows=*/true);
  std::vector<float> w = normalInputs(out->shape(), rng);
  graph.backward(top, &w);

  Parameters& params = graph.params();
  for(size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE("input " + names[i] + " " + shapes[i].toString() + " of op '" + out->opName() + "'");
    if(isConstant(i)) {
      EXPECT_FALSE(values[i]->needsGrad());  // the operator saw an input without a gradient
      continue;
    }
    std::vector<float> analytic = kernels::toHost(params.grad(names[i]));
    Tensor valueTensor = params.value(names[i]);
    std::vector<float> value = kernels::toHost(valueTensor);
    std::vector<double> numeric(analytic.size());
    for(size_t k = 0; k < analytic.size(); ++k) {
      float saved = value[k];
      value[k] = saved + eps;
      kernels::fromHost(valueTensor, value);
      graph.forward();
      double plus = weightedSum(kernels::toHost(out->val()), w);
      value[k] = saved - eps;
      kernels::fromHost(valueTensor, value);
      graph.forward();
      double minus = weightedSum(kernels::toHost(out->val()), w);
      value[k] = saved;
      kernels::fromHost(valueTensor, value);
      numeric[k] = (plus - minus) / (2.0 * eps);
    }
    double diff = 0, na = 0, nn = 0;
    for(size_t k = 0; k < analytic.size(); ++k) {
      diff += (analytic[k] - numeric[k]) * (analytic[k] - numeric[k]);
      na += double(analytic[k]) * analytic[k];
      nn += numeric[k] * numeric[k];
    }
    double rel = std::sqrt(diff) / std::max({std::sqrt(na), std::sqrt(nn), 1e-3});
    EXPECT_LT(rel, tol) << "analytic norm " << std::sqrt(na) << ", numeric norm " << std::sqrt(nn);
  }
  graph.forward();  // leave values as they were for callers that inspect them
}

}  // namespace test
}  // namespace marian
