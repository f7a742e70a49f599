// Dropout as x * mask, where the mask is a leaf drawn from the graph's seed at build time:
// re-running forward on the same graph reuses the same mask, and the gradient is the mask
// itself (through the multiplication's backward).
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

class DropoutMaskNode : public Node {
public:
  DropoutMaskNode(ExpressionGraph& g, const Shape& shape, float keep)
      : Node(g, shape, {}), keep_(keep), seed_(g.nextRandomSeed()) {}
  const char* opName() const override { return "dropout_mask"; }
  void forward() override { kernels::bernoulliMask(val_, keep_, seed_); }
  void backward() override {}

private:
  float keep_;
  uint64_t seed_;
};

}  // namespace

Expr dropout(Expr x, float prob, const Shape& maskShape) {
  ABORT_IF(prob < 0.f || prob >= 1.f, "Dropout probability {} is not in [0, 1)", prob);
  if(prob == 0.f)
    return x;
  ABORT_IF(Shape::broadcast(x->shape(), maskShape) != x->shape(),
           "dropout: mask {} does not broadcast onto {}", maskShape.toString(), x->shape().toString());
  Expr mask = x->graph().record<DropoutMaskNode>(x->graph(), maskShape, 1.f - prob);
  return x * mask;
}

Expr dropout(Expr x, float prob) { return dropout(x, prob, x->shape()); }

}  // namespace marian
