#pragma once
// defines: marian::ParamNode — a graph node standing for parameter `index` of the graph's
// Parameters (its value and gradient live in their flat buffers); for the graph's own files.
#include "graph/expression_graph.h"

namespace marian {

class ParamNode : public Node {
public:
  ParamNode(ExpressionGraph& g, const Shape& shape, size_t index)
      : Node(g, shape, {}), index_(index) {
    needsGrad_ = true;
  }
  const char* opName() const override { return "param"; }
  bool allocatesValue() const override { return false; }
  void forward() override { val_ = graph_.params().value(index_); }
  void backward() override {}
  size_t index() const { return index_; }

private:
  size_t index_;
};

}  // namespace marian
