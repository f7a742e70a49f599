// Layer normalisation over the last axis with optional gain (gamma) and bias (beta); the
// gradient formulas are in tensors/cpu/layer_norm.cpp.
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

std::vector<Expr> normChildren(Expr x, Expr gamma, Expr beta) {
  std::vector<Expr> c{x};
  for(Expr p : {gamma, beta}) {
    if(!p)
      continue;
    ABORT_IF(p->shape().elements() != size_t(x->shape().back()),
             "layerNorm: scale/bias {} does not match the last axis of {}", p->shape().toString(),
             x->shape().toString());
    c.push_back(p);
  }
  return c;
}

class LayerNormNode : public Node {
public:
  LayerNormNode(Expr x, Expr gamma, Expr beta, float eps)
      : Node(x->graph(), x->shape(), normChildren(x, gamma, beta)),
        gammaIndex_(gamma ? 1 : 0), betaIndex_(beta ? (gamma ? 2 : 1) : 0), eps_(eps) {}
  const char* opName() const override { return "layer_norm"; }
  bool backwardReadsValue() const override { return false; }  // x and gamma, not the output
  void forward() override {
    kernels::layerNorm(val_, child(0)->val(), value(gammaIndex_), value(betaIndex_), eps_);
  }
  void backward() override {
    kernels::layerNormGrad(childGrad(0), gradOf(gammaIndex_), gradOf(betaIndex_), child(0)->val(),
                           value(gammaIndex_), grad_, eps_);
  }

private:
  // index 0 means "absent": child 0 is always x
  Tensor value(size_t i) const { return i ? child(i)->val() : Tensor(); }
  Tensor gradOf(size_t i) const { return i ? childGrad(i) : Tensor(); }
  size_t gammaIndex_, betaIndex_;
  float eps_;
};

}  // namespace

Expr layerNorm(Expr x, Expr gamma, Expr beta, float eps) {
  return x->graph().record<LayerNormNode>(x, gamma, beta, eps);
}

}  // namespace marian
