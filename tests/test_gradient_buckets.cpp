// The order in which backward makes parameters' gradients final (ExpressionGraph::gradientOrder)
// and the gradient buckets of sync-SGD cut by it (training/exchange/gradient_buckets.h).
#include <gtest/gtest.h>

#include "graph/operators.h"
#include "training/exchange/gradient_buckets.h"

namespace marian {

bool operator==(const Range& a, const Range& b) { return a.offset == b.offset && a.size == b.size; }
void PrintTo(const Range& r, std::ostream* out) { *out << "[" << r.offset << ", " << r.end() << ")"; }

namespace {

// A table looked up at the start and read again by the output (tied), a layer between, an
// output bias, and a parameter declared after the layer but read by nothing: backward finishes
// the bias first, then (its declaration reached) the unused one, the layer, and the table at
// its lookups; with lookups apart the table right after the output's product.
TEST(GradientBuckets, GradientOrderFollowsBackwardAndPutsTiedTablesAfterTheirDenseReader) {
  ExpressionGraph g;
  Expr table = g.param("table", {5, 3}, inits::fromValue(0.1f));
  Expr w = g.param("w", {3, 3}, inits::fromValue(0.2f));
  g.param("unused", {2}, inits::zeros());
  Expr hidden = dot(rows(table, g.indices({1, 4, 1})), w);
  Expr product = dot(hidden, table, false, true);
  Expr logits = product + g.param("bias", {5}, inits::fromValue(0.3f));
  sum(sum(logits * logits, 1), 0);
  g.forward();
  auto names = [&](const std::vector<size_t>& order) {
    std::vector<std::string> out;
    for(size_t p : order)
      out.push_back(g.params().entries()[p].name);
    return out;
  };
  EXPECT_EQ(names(g.gradientOrder(false)), (std::vector<std::string>{"bias", "unused", "w", "table"}));
  EXPECT_EQ(names(g.gradientOrder(true)), (std::vector<std::string>{"bias", "table", "unused", "w"}));
}

// Buckets take the parameters in the given order and close before the one that would take
// them past the size (a larger one alone); a bucket's neighbours in the layout merge into one
// range, others stay apart.
TEST(GradientBuckets, CutInTheGivenOrderUpToTheSize) {
  ExpressionGraph g;
  for(auto [name, size] : {std::pair<const char*, int>{"a", 4}, {"b", 6}, {"c", 10}, {"d", 3}})
    g.param(name, {size}, inits::zeros());
  g.forward();  // the layout by name: a [0, 4), b [4, 10), c [10, 20), d [20, 23)
  const Parameters& layout = g.params();
  auto index = [&](const char* name) { return layout.index(name); };
  std::vector<size_t> backwardOrder = {index("d"), index("a"), index("c"), index("b")};
  EXPECT_EQ(gradientBuckets(layout, 10, backwardOrder),
            (std::vector<GradientBucket>{{{0, 4}, {20, 3}}, {{10, 10}}, {{4, 6}}}));
  std::vector<size_t> layoutOrder = {index("a"), index("b"), index("c"), index("d")};
  EXPECT_EQ(gradientBuckets(layout, 10, layoutOrder), (std::vector<GradientBucket>{{{0, 10}}, {{10, 10}}, {{20, 3}}}));
  EXPECT_EQ(gradientBuckets(layout, 5, layoutOrder),
            (std::vector<GradientBucket>{{{0, 4}}, {{4, 6}}, {{10, 10}}, {{20, 3}}}));
  EXPECT_EQ(gradientBuckets(layout, 0, backwardOrder), (std::vector<GradientBucket>{{{0, 23}}}));
  EXPECT_EQ(bucketSize({{0, 4}, {20, 3}}), 7u);
  EXPECT_THROW(gradientBuckets(layout, 10, {index("a"), index("b"), index("c")}), Error);
  EXPECT_THROW(gradientBuckets(layout, 10, {index("a"), index("b"), index("c"), index("c")}), Error);
}

}  // namespace
}  // namespace marian
