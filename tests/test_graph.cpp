// The expression graph: forward/backward mechanics, parameter memory, build-time shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph/operators.h"
#include "tensors/arena.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

TEST(Graph, ForwardComputesValuesInCreationOrder) {
  ExpressionGraph g;
  Expr a = g.constant({2, 2}, {1, 2, 3, 4});
  Expr b = g.constant({2}, {10, 20});
  Expr c = relu(a * b - 35.f);  // [[10,40],[30,80]] - 35
  g.forward();
  EXPECT_EQ(kernels::toHost(c->val()), (std::vector<float>{0, 5, 0, 45}));
}

TEST(Graph, BackwardZeroesParameterGradientsEachTime) {
  ExpressionGraph g;
  Expr w = g.param("w", {3}, inits::fromVector({1, 2, 3}));
  Expr loss = sum(square(w), 0);  // d/dw = 2w
  for(int i = 0; i < 3; ++i) {
    g.forward();
    g.backward(loss);
    EXPECT_EQ(kernels::toHost(g.params().grad("w")), (std::vector<float>{2, 4, 6}));
  }
}

// Inference forward: the kept values (and a view of one) equal the full forward's, and the
// workspace holds only what is in flight: a chain of 40 same-size steps reuses two blocks.
TEST(Graph, InferenceForwardKeepsWhatIsAskedAndReleasesTheRest) {
  auto build = [](ExpressionGraph& g, Expr& mid, Expr& out, Expr& view) {
    Expr x = g.constant({64, 64}, std::vector<float>(64 * 64, 0.5f));
    Expr w = g.param("w", {64, 64}, inits::fromValue(0.01f));
    for(int i = 0; i < 40; ++i) {
      x = tanh(dot(x, w) + x);
      if(i == 20)
        mid = x;
    }
    view = reshape(mid, {4096});
    out = sum(x, -1);
  };
  ExpressionGraph all, some;
  Expr midAll, outAll, viewAll, mid, out, view;
  build(all, midAll, outAll, viewAll);
  all.forward();
  build(some, mid, out, view);
  some.forward({out, view});
  EXPECT_EQ(kernels::toHost(out->val()), kernels::toHost(outAll->val()));
  EXPECT_EQ(kernels::toHost(view->val()), kernels::toHost(viewAll->val()));
  EXPECT_EQ(kernels::toHost(mid->val()), kernels::toHost(midAll->val()));  // what the view shows
  EXPECT_LT(some.workspace().peak() * 10, all.workspace().peak());
}

TEST(Graph, ParametersPersistAcrossBuildsAndGrowTheFlatBuffer) {
  ExpressionGraph g;
  g.param("b_first", {2}, inits::fromValue(3.f));
  g.forward();
  g.clear();
  Expr first = g.param("b_first", {2}, inits::zeros());  // already exists: keeps its values
  Expr second = g.param("a_second", {4}, inits::ones());
  g.forward();
  EXPECT_EQ(kernels::toHost(first->val()), (std::vector<float>{3, 3}));
  EXPECT_EQ(kernels::toHost(second->val()), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(g.params().totalSize(), 6u);
  // sorted by name: a_second first, then b_first, in one buffer
  EXPECT_EQ(second->val().f32(), g.params().values().f32());
  EXPECT_EQ(first->val().f32(), g.params().values().f32() + 4);
  EXPECT_THROW(g.param("a_second", {5}, inits::ones()), Error);
}

TEST(Graph, ConstantsGetNoGradientAndBackwardNeedsAParameter) {
  ExpressionGraph g;
  Expr c = g.constant({2}, {1, 2});
  Expr y = exp(c);
  g.forward();
  EXPECT_FALSE(y->needsGrad());
  EXPECT_THROW(g.backward(y), Error);
}

TEST(Graph, BuildTimeShapeErrorsNameTheShapes) {
  ExpressionGraph g;
  Expr a = g.param("a", {2, 3}, inits::ones());
  Expr b = g.param("b", {4, 5}, inits::ones());
  try {
    dot(a, b);
    FAIL();
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[2x3] x [4x5]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a + b, Error);
  EXPECT_THROW(reshape(a, {5}), Error);
  EXPECT_THROW(transpose(a, {0, 0}), Error);
  EXPECT_THROW(slice(a, 1, 2, 5), Error);
  EXPECT_THROW(concat({a, b}, 0), Error);
  EXPECT_THROW(crossEntropy(a, g.indices({0, 1, 2})), Error);
  EXPECT_THROW(dropout(a, 1.5f), Error);
}

// A product over an empty inner dimension is a sum of nothing: zeros of the result's shape, in
// forward, and nothing to give its empty operands in backward. dot and bdot record it with the
// shape of their operands' rows and batch.
TEST(Graph, ProductsOverAnEmptyInnerDimensionAreZero) {
  ExpressionGraph g;
  Expr w = g.param("w", {4, 5}, inits::ones());
  Expr a = g.constant({4, 0}, {}), b = g.constant({0, 5}, {});
  Expr p = dot(a, b);
  Expr ba = g.constant({3, 4, 0}, {}), bb = g.constant({3, 0, 5}, {});
  Expr q = bdot(ba, bb, false, false, 0.5f);
  Expr qt = bdot(g.constant({3, 0, 4}, {}), g.constant({1, 5, 0}, {}), true, true);
  EXPECT_EQ(p->shape(), Shape({4, 5}));
  EXPECT_EQ(q->shape(), Shape({3, 4, 5}));
  EXPECT_EQ(qt->shape(), Shape({3, 4, 5}));
  Expr loss = sum(sum(w * (p + 1.f), 1), 0) + sum(sum(sum(q + qt, 2), 1), 0);
  g.forward();
  EXPECT_EQ(kernels::toHost(p->val()), std::vector<float>(20, 0.f));
  EXPECT_EQ(kernels::toHost(q->val()), std::vector<float>(60, 0.f));
  EXPECT_EQ(kernels::toHost(qt->val()), std::vector<float>(60, 0.f));
  g.backward(loss);
  EXPECT_EQ(kernels::toHost(g.params().grad("w")), std::vector<float>(20, 1.f));
}

TEST(Graph, DropoutIsReproducibleFromTheSeed) {
  auto run = [](uint64_t seed) {
    ExpressionGraph g(cpuDevice(), seed);
    Expr x = dropout(g.constant({1000}, std::vector<float>(1000, 1.f)), 0.25f);
    g.forward();
    return kernels::toHost(x->val());
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

// The mask alone (the s2s reuses one at every time step): values 0 or 1/keep, about a `prob`
// share of zeros, and the very mask dropout applies to ones.
TEST(Graph, DropoutMaskIsWhatDropoutMultipliesBy) {
  auto draw = [](bool alone) {
    ExpressionGraph g(cpuDevice(), 5);
    Expr x = alone ? dropoutMask(g, {4000}, 0.25f) : dropout(g.constant({4000}, std::vector<float>(4000, 1.f)), 0.25f);
    g.forward();
    return kernels::toHost(x->val());
  };
  std::vector<float> mask = draw(true);
  EXPECT_EQ(mask, draw(false));
  size_t zeros = 0;
  for(float m : mask) {
    EXPECT_TRUE(m == 0.f || m == 1.f / 0.75f) << m;
    zeros += m == 0.f;
  }
  EXPECT_NEAR(double(zeros) / mask.size(), 0.25, 0.03);
  ExpressionGraph g(cpuDevice(), 5);
  EXPECT_THROW(dropoutMask(g, {3}, 1.f), Error);
}

// As Marian's, --workspace plans the activations' memory and does not cap it: a graph that needs
// more computes (a run does not end midway on a long batch).
TEST(Graph, AGraphPastTheWorkspaceComputes) {
  ExpressionGraph g(cpuDevice(), 1, /*workspaceLimitMB=*/1);
  Expr x = g.constant({512, 512}, std::vector<float>(512 * 512, 1.f));  // exactly 1 MB
  Expr y = tanh(x);  // a second megabyte: past the plan
  g.forward();
  EXPECT_GE(g.workspace().peak(), size_t(2) << 20);
  EXPECT_NEAR(kernels::toHost(y->val())[7], std::tanh(1.f), 1e-6);
}

// A table read by a dense node (a tied output layer, recorded last, so its backward runs first)
// and by row lookups: with lookupsApart the table's gradient is ready right after the dense
// node's backward and holds only its part; the lookups' rows land in the buffer handed out;
// together they are the usual gradient. A table only looked up is not offered; an empty tensor
// keeps the usual walk.
TEST(Graph, LookupsApartLeaveTheTablesGradientReadyAfterItsDenseReaders) {
  auto build = [](ExpressionGraph& g) {
    Expr table = g.param("table", {5, 3}, inits::fromVector({0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f,
                                                             0.9f, -1.0f, 1.1f, 1.2f, 1.3f, 1.4f, -1.5f}));
    Expr other = g.param("other", {4, 3}, inits::fromValue(0.5f));
    Expr h = g.param("h", {2, 3}, inits::fromVector({1, 2, 3, -1, 0.5f, 2}));
    Expr ids = g.indices({1, 3, 1});
    Expr a = rows(table, ids);  // row 1 twice
    Expr b = rows(table, g.indices({0, 1}));
    Expr c = rows(other, g.indices({2}));
    Expr logits = dot(h, table, false, true);
    Expr cost = sum(sum(a * a, 1), 0) + sum(sum(b, 1), 0) + sum(sum(c * c, 1), 0) + sum(sum(logits * logits, 1), 0);
    g.forward();
    return cost;
  };
  ExpressionGraph reference;
  reference.backward(build(reference));
  std::vector<float> full = kernels::toHost(reference.params().grad("table"));

  ExpressionGraph g;
  Expr cost = build(g);
  size_t table = g.params().index("table");
  FlatBuffer buffer(g.device(), Type::float32, 15);
  std::vector<std::string> calls;
  std::vector<float> atReady;
  ExpressionGraph::GradientReady ready = [&](size_t p) {
    calls.push_back("ready " + g.params().entries()[p].name);
    if(p == table)
      atReady = kernels::toHost(g.params().grad(table));
  };
  g.backward(cost, nullptr, false, ready, [&](size_t p) {
    calls.push_back("apart " + g.params().entries()[p].name);
    return buffer.all().reshaped(Shape({5, 3}));
  });
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "apart table"), 1) << ::testing::PrintToString(calls);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "apart other"), 0);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "ready table"), 1);
  // at() of a call that never came is calls.size(): each must be there once for the order to mean anything
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "ready other"), 1) << ::testing::PrintToString(calls);
  auto at = [&](const std::string& c) { return std::find(calls.begin(), calls.end(), c) - calls.begin(); };
  EXPECT_EQ(at("ready table"), at("apart table") + 1);
  EXPECT_LT(at("ready table"), at("ready other"));  // the table's lookups come later in backward
  std::vector<float> dense = kernels::toHost(g.params().grad(table)), rows = kernels::toHost(buffer.all());
  EXPECT_EQ(atReady, dense);  // nothing added to the gradient after it was ready
  for(size_t i = 0; i < 15; ++i) {
    EXPECT_NEAR(dense[i] + rows[i], full[i], 1e-5f) << i;
    if(i / 3 == 2 || i / 3 == 4) {  // rows no lookup read
      EXPECT_EQ(rows[i], 0.f) << i;
    }
  }
  EXPECT_NEAR(rows[3], 2 * (2 * 0.4f) + 1, 1e-6f);  // row 1, looked up twice by a (d(a*a) = 2a) and once by b
  EXPECT_NE(dense, full);

  ExpressionGraph kept;  // an empty tensor: the lookups stay in the gradient, ready at the end
  Expr keptCost = build(kept);
  calls.clear();
  kept.backward(keptCost, nullptr, false, [&](size_t p) { calls.push_back(kept.params().entries()[p].name); },
                [&](size_t) { return Tensor(); });
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "table"), 1);
  EXPECT_EQ(kernels::toHost(kept.params().grad("table")), full);
}

}  // namespace
}  // namespace marian
