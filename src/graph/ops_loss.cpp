// Cross-entropy with label smoothing and a padding mask, from logits (log-softmax fused in):
//   loss = mask * ((1 - eps) * -log p(label) + eps * mean_v -log p(v))
//   dlogits (+)= dloss * mask * (softmax - ((1 - eps) * onehot(label) + eps / V))
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

Shape lossShape(Expr logits, Expr labels, Expr mask) {
  const Shape& s = logits->shape();
  ABORT_IF(labels->valueType() != Type::int32, "crossEntropy: labels must be int32 indices");
  ABORT_IF(labels->shape().elements() != s.rows(),
           "crossEntropy: {} labels for logits {} ({} positions)", labels->shape().elements(),
           s.toString(), s.rows());
  ABORT_IF(mask && mask->shape().elements() != s.rows(),
           "crossEntropy: mask {} for logits {}", mask->shape().toString(), s.toString());
  std::vector<int> dims = s.dims();
  dims.pop_back();
  if(dims.empty())
    dims.push_back(1);
  return Shape(dims);
}

std::vector<Expr> lossChildren(Expr logits, Expr labels, Expr mask) {
  if(mask)
    return {logits, labels, mask};
  return {logits, labels};
}

class CrossEntropyNode : public Node {
public:
  CrossEntropyNode(Expr logits, Expr labels, Expr mask, float smoothing)
      : Node(logits->graph(), lossShape(logits, labels, mask), lossChildren(logits, labels, mask)),
        smoothing_(smoothing) {
    ABORT_IF(mask && mask->needsGrad(), "crossEntropy: the mask must be a constant");
    ABORT_IF(smoothing < 0.f || smoothing >= 1.f, "Label smoothing {} is not in [0, 1)", smoothing);
  }
  const char* opName() const override { return "cross_entropy"; }
  bool backwardReadsValue() const override { return false; }  // the logits, labels and mask
  bool overwritesFreshChildGrad(size_t i) const override { return i == 0; }
  void forward() override {
    kernels::crossEntropy(val_, child(0)->val(), child(1)->val(), mask(), smoothing_);
  }
  void backward() override {
    kernels::crossEntropyGrad(child(0)->grad(), child(0)->val(), child(1)->val(), mask(),
                              smoothing_, grad_, !childGradFresh(0));
  }

private:
  Tensor mask() const { return children_.size() > 2 ? child(2)->val() : Tensor(); }
  float smoothing_;
};

}  // namespace

Expr crossEntropy(Expr logits, Expr labels, Expr mask, float smoothing) {
  return logits->graph().record<CrossEntropyNode>(logits, labels, mask, smoothing);
}

}  // namespace marian
