// Softmax and log-softmax along the last axis.
//   softmax:     dx += y * (dy - sum(dy * y))
//   log-softmax: dx += dy - exp(y) * sum(dy)
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

class SoftmaxNode : public Node {
public:
  explicit SoftmaxNode(Expr x) : Node(x->graph(), x->shape(), {x}) {}
  const char* opName() const override { return "softmax"; }
  bool backwardReadsChild(size_t) const override { return false; }  // the output only
  void forward() override { kernels::softmax(val_, child(0)->val()); }
  void backward() override { kernels::softmaxGrad(child(0)->grad(), val_, grad_); }
};

class LogSoftmaxNode : public Node {
public:
  explicit LogSoftmaxNode(Expr x) : Node(x->graph(), x->shape(), {x}) {}
  const char* opName() const override { return "log_softmax"; }
  bool backwardReadsChild(size_t) const override { return false; }  // the output only
  void forward() override { kernels::logSoftmax(val_, child(0)->val()); }
  void backward() override { kernels::logSoftmaxGrad(child(0)->grad(), val_, grad_); }
};

}  // namespace

Expr softmax(Expr x) { return x->graph().record<SoftmaxNode>(x); }
Expr logSoftmax(Expr x) { return x->graph().record<LogSoftmaxNode>(x); }

}  // namespace marian
