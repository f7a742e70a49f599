// The expression graph: forward/backward mechanics, parameter memory, build-time shape errors.
#include <gtest/gtest.h>

#include "graph/operators.h"
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

TEST(Graph, WorkspaceLimitIsEnforced) {
  ExpressionGraph g(cpuDevice(), 1, /*workspaceLimitMB=*/1);
  Expr x = g.constant({512, 512}, std::vector<float>(512 * 512, 1.f));  // exactly 1 MB
  tanh(x);  // a second megabyte: over the limit
  EXPECT_THROW(g.forward(), Error);
}

}  // namespace
}  // namespace marian
