#include "graph/node.h"

namespace marian {

Node::Node(ExpressionGraph& graph, const Shape& shape, std::vector<Expr> children, Type valueType)
    : graph_(graph), shape_(shape), valueType_(valueType), children_(std::move(children)) {
  for(Expr c : children_) {
    ABORT_IF(!c, "Operator built from a null expression");
    ABORT_IF(&c->graph() != &graph, "Operator mixes expressions of two different graphs");
    needsGrad_ = needsGrad_ || c->needsGrad();
  }
}

}  // namespace marian
