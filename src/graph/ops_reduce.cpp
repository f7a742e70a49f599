// Sum, mean and max along one axis. Gradients: sum spreads dy, mean spreads dy / n, max sends dy
// to the (first) maximal element.
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

class ReduceNode : public Node {
public:
  ReduceNode(Expr x, ReduceOp op, int axis, const char* name)
      : Node(x->graph(), x->shape().with(axis, 1), {x}),
        op_(op), axis_(x->shape().axis(axis)), name_(name) {}
  const char* opName() const override { return name_; }
  void forward() override { kernels::reduce(op_, val_, child(0)->val(), axis_); }
  void backward() override {
    kernels::reduceGrad(op_, child(0)->grad(), child(0)->val(), val_, grad_, axis_);
  }

private:
  ReduceOp op_;
  int axis_;
  const char* name_;
};

}  // namespace

Expr sum(Expr x, int axis) { return x->graph().record<ReduceNode>(x, ReduceOp::Sum, axis, "sum"); }
Expr mean(Expr x, int axis) { return x->graph().record<ReduceNode>(x, ReduceOp::Mean, axis, "mean"); }
Expr max(Expr x, int axis) { return x->graph().record<ReduceNode>(x, ReduceOp::Max, axis, "max"); }

}  // namespace marian
