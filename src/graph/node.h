#pragma once
// defines: marian::Node (one operator of the expression graph), marian::Expr
// A node infers its shape when built, computes its value in forward() and adds its
// contribution to its children's gradients in backward(); both sit side by side in one
// ops_*.cpp file per family of operators. Nodes never allocate: the graph gives them value and
// gradient memory from its workspace (or from the parameter buffers).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tensors/tensor.h"

namespace marian {

class ExpressionGraph;
class Node;

// A handle to a node, owned by its graph and valid until the graph is cleared. A class rather
// than Node* so that models can be written with operators (a + b, 2.f * x).
class Expr {
public:
  Expr() = default;
  Expr(std::nullptr_t) {}
  Expr(Node* node) : node_(node) {}
  Node* operator->() const { return node_; }
  Node& operator*() const { return *node_; }
  Node* get() const { return node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const Expr& o) const { return node_ == o.node_; }
  bool operator!=(const Expr& o) const { return node_ != o.node_; }

private:
  Node* node_ = nullptr;
};

class Node {
public:
  Node(ExpressionGraph& graph, const Shape& shape, std::vector<Expr> children,
       Type valueType = Type::float32);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual const char* opName() const = 0;
  virtual void forward() = 0;
  // dchild += d(this)/d(child) * grad(), for every child that needsGrad().
  virtual void backward() = 0;
  // Parameters and views point val() at memory they do not own; they set it in forward().
  virtual bool allocatesValue() const { return true; }
  // What backward() reads besides gradients: this node's value, child i's value. Everything by
  // default; an operator that needs less says so, and a forward pass for training releases the
  // other values once the forward pass is done with them (ExpressionGraph::forward).
  virtual bool backwardReadsValue() const { return true; }
  virtual bool backwardReadsChild(size_t i) const { return true; }
  // Whether this node reads child i, forward and backward, only as an operand of its matrix
  // products: such a value, which the products round to the graph's product type anyway, may be
  // kept for backward in that type once forward is done with it (ExpressionGraph::forward).
  virtual bool readsChildAsProductOperand(size_t i) const { return false; }
  // Whether backward() adds to child i's gradient only rows picked by an index (an embedding
  // lookup): such additions can go to a buffer of their own (ExpressionGraph::LookupsApart).
  virtual bool addsRowsToChild(size_t i) const { return false; }
  // Whether backward() can write child i's gradient outright, every element of it, when this
  // node is the first to write it (childGradFresh): the graph then leaves that gradient unzeroed.
  // Worth it where a kernel writes as cheaply as it adds (a product's beta, an accumulate flag):
  // zeroing and re-reading the logits' gradient cost a twentieth of a bfloat16 update.
  virtual bool overwritesFreshChildGrad(size_t i) const { return false; }

  ExpressionGraph& graph() const { return graph_; }
  const Shape& shape() const { return shape_; }
  Type valueType() const { return valueType_; }
  const std::vector<Expr>& children() const { return children_; }
  Expr child(size_t i) const { return children_[i]; }
  bool needsGrad() const { return needsGrad_; }

  Tensor val() const { return val_; }
  // The value as matrix products read it: its copy in the product type where a training forward
  // made one for backward (before its first product, which reads it too; val() is released after
  // its last reader: ExpressionGraph::forward), else val().
  Tensor productVal() const { return productVal_.empty() ? val_ : productVal_; }
  Tensor grad() const { return grad_; }
  // The gradient of child i, or an empty tensor when that child needs none.
  Tensor childGrad(size_t i) const {
    return children_[i]->needsGrad() ? children_[i]->grad_ : Tensor();
  }
  // Within backward(): child i's gradient holds nothing yet, not even zeros, and this node must
  // write all of it (only where overwritesFreshChildGrad(i) said it can).
  bool childGradFresh(size_t i) const { return (freshChildGrads_ >> i) & 1u; }
  // dC += ... or dC = ... as childGradFresh(i) says: a product's beta for child i's gradient
  float childGradBeta(size_t i) const { return childGradFresh(i) ? 0.f : 1.f; }

protected:
  ExpressionGraph& graph_;
  Shape shape_;
  Type valueType_;
  std::vector<Expr> children_;
  bool needsGrad_ = false;
  Tensor val_, grad_, productVal_;
  size_t position_ = 0;  // in the graph's recording order (set by ExpressionGraph::record)
  uint32_t freshChildGrads_ = 0;  // bit i: childGradFresh(i), set by ExpressionGraph::backward

  friend class ExpressionGraph;
};

}  // namespace marian
