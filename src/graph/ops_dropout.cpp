// Dropout as x * mask, the mask drawn from a seed the graph hands out at build time: re-running
// forward on the same graph gives the same mask. A mask of x's own shape is never stored (forward
// and backward draw it again from the seed: memory the size of every dropped activation); a mask
// that broadcasts (shared along some axes) is a leaf, and the multiplication's backward reads it.
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

// x times a mask of x's shape, or with maskRowOf (second child) of x's rows taking rows of one mask.
class DropoutNode : public Node {
public:
  DropoutNode(Expr x, float keep, Expr maskRowOf = nullptr)
      : Node(x->graph(), x->shape(), maskRowOf ? std::vector<Expr>{x, maskRowOf} : std::vector<Expr>{x}),
        keep_(keep), seed_(x->graph().nextRandomSeed()) {}
  const char* opName() const override { return "dropout"; }
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i == 1; }
  bool overwritesFreshChildGrad(size_t i) const override { return i == 0; }
  void forward() override { kernels::dropoutMultiply(val_, child(0)->val(), keep_, seed_, false, maskRowOf()); }
  void backward() override {
    if(child(0)->needsGrad())
      kernels::dropoutMultiply(child(0)->grad(), grad_, keep_, seed_, !childGradFresh(0), maskRowOf());
  }

private:
  Tensor maskRowOf() const { return children().size() > 1 ? child(1)->val() : Tensor(); }
  float keep_;
  uint64_t seed_;
};

void checkProbability(float prob) {
  ABORT_IF(prob < 0.f || prob >= 1.f, "Dropout probability {} is not in [0, 1)", prob);
}

}  // namespace

Expr dropoutMask(ExpressionGraph& g, const Shape& shape, float prob) {
  checkProbability(prob);
  return g.record<DropoutMaskNode>(g, shape, 1.f - prob);
}

Expr dropout(Expr x, float prob, const Shape& maskShape) {
  checkProbability(prob);
  if(prob == 0.f)
    return x;
  ABORT_IF(Shape::broadcast(x->shape(), maskShape) != x->shape(),
           "dropout: mask {} does not broadcast onto {}", maskShape.toString(), x->shape().toString());
  if(maskShape == x->shape())
    return x->graph().record<DropoutNode>(x, 1.f - prob);
  return x * dropoutMask(x->graph(), maskShape, prob);
}

Expr dropout(Expr x, float prob) { return dropout(x, prob, x->shape()); }

Expr dropout(Expr x, float prob, Expr maskRowOf) {
  checkProbability(prob);
  ABORT_IF(maskRowOf->valueType() != Type::int32 || maskRowOf->shape().elements() != x->shape().rows(),
           "dropout: mask rows {} for the rows of {}", maskRowOf->shape().toString(), x->shape().toString());
  return prob == 0.f ? x : x->graph().record<DropoutNode>(x, 1.f - prob, maskRowOf);
}

}  // namespace marian
