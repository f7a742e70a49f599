// Matrix products. With C = s * op(A) op(B), the gradients are (op = optional transpose):
//   dA += s * dC op(B)^T   (or s * op(B) dC^T when A is transposed)
//   dB += s * op(A)^T dC   (or s * dC^T op(A) when B is transposed)
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

Shape dotShape(Expr a, Expr b, bool transA, bool transB) {
  ABORT_IF(b->shape().rank() != 2, "dot: right operand must be a matrix, got {}",
           b->shape().toString());
  ABORT_IF(transA && a->shape().rank() != 2, "dot: a transposed left operand must be a matrix, got {}",
           a->shape().toString());
  int k = transA ? a->shape()[0] : a->shape().back();
  int kb = transB ? b->shape()[1] : b->shape()[0];
  int n = transB ? b->shape()[0] : b->shape()[1];
  ABORT_IF(k != kb, "dot: inner dimensions differ: {}{} x {}{}", a->shape().toString(),
           transA ? "^T" : "", b->shape().toString(), transB ? "^T" : "");
  if(transA)
    return Shape({a->shape()[1], n});
  return a->shape().with(-1, n);
}

// Adds the gradients of C = s * op(A) op(B) for a single or batched product (or writes them:
// betaA, betaB 0 for a fresh gradient, Node::childGradBeta). dC, read by both and by nothing
// after them, is rounded to the graph's product type once, in place.
template <class Gemm>
void productGrad(ExpressionGraph& graph, Gemm gemm, Tensor dA, Tensor dB, Tensor A, Tensor B, Tensor dC, bool transA,
                 bool transB, float s, float betaA, float betaB) {
  if(!dA.empty() && !dB.empty())
    dC = graph.roundInPlace(dC);
  if(!dA.empty()) {
    if(transA)
      gemm(dA, B, dC, transB, true, s, betaA);
    else
      gemm(dA, dC, B, false, !transB, s, betaA);
  }
  if(!dB.empty()) {
    if(transB)
      gemm(dB, dC, A, true, transA, s, betaB);
    else
      gemm(dB, A, dC, !transA, false, s, betaB);
  }
}

class DotNode : public Node {
public:
  DotNode(Expr a, Expr b, bool transA, bool transB, float scale)
      : Node(a->graph(), dotShape(a, b, transA, transB), {a, b}),
        transA_(transA), transB_(transB), scale_(scale) {}
  const char* opName() const override { return "dot"; }
  // dA = dC B^T reads B, dB = A^T dC reads A; the product itself is not read
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i < 2 && child(1 - i)->needsGrad(); }
  bool readsChildAsProductOperand(size_t i) const override { return i < 2; }
  bool overwritesFreshChildGrad(size_t i) const override { return i < 2; }
  void forward() override {
    kernels::gemm(val_, child(0)->productVal(), child(1)->productVal(), transA_, transB_, scale_, 0.f);
  }
  void backward() override {
    productGrad(graph(), kernels::gemm, childGrad(0), childGrad(1), child(0)->productVal(), child(1)->productVal(),
                grad_, transA_, transB_, scale_, childGradBeta(0), childGradBeta(1));
  }

private:
  bool transA_, transB_;
  float scale_;
};

Shape bdotShape(Expr a, Expr b, bool transA, bool transB) {
  const Shape &sa = a->shape(), &sb = b->shape();
  ABORT_IF(sa.rank() < 2 || sb.rank() < 2, "bdot: operands must have rank >= 2, got {} and {}",
           sa.toString(), sb.toString());
  int m = transA ? sa[-1] : sa[-2], k = transA ? sa[-2] : sa[-1];
  int kb = transB ? sb[-1] : sb[-2], n = transB ? sb[-2] : sb[-1];
  ABORT_IF(k != kb, "bdot: inner dimensions differ: {}{} x {}{}", sa.toString(), transA ? "^T" : "",
           sb.toString(), transB ? "^T" : "");
  size_t batchA = sa.matrices(), batchB = sb.matrices();
  ABORT_IF(batchA != batchB && batchA != 1 && batchB != 1, "bdot: batches of {} and {} differ",
           sa.toString(), sb.toString());
  Shape out = batchA >= batchB ? sa : sb;
  out[-2] = m;
  out[-1] = n;
  return out;
}

class BdotNode : public Node {
public:
  BdotNode(Expr a, Expr b, bool transA, bool transB, float scale)
      : Node(a->graph(), bdotShape(a, b, transA, transB), {a, b}),
        transA_(transA), transB_(transB), scale_(scale) {}
  const char* opName() const override { return "bdot"; }
  // dA = dC B^T reads B, dB = A^T dC reads A; the product itself is not read
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i < 2 && child(1 - i)->needsGrad(); }
  bool readsChildAsProductOperand(size_t i) const override { return i < 2; }
  bool overwritesFreshChildGrad(size_t i) const override { return i < 2; }
  void forward() override {
    kernels::gemmBatched(val_, child(0)->productVal(), child(1)->productVal(), transA_, transB_, scale_, 0.f);
  }
  void backward() override {
    productGrad(graph(), kernels::gemmBatched, childGrad(0), childGrad(1), child(0)->productVal(),
                child(1)->productVal(), grad_, transA_, transB_, scale_, childGradBeta(0), childGradBeta(1));
  }

private:
  bool transA_, transB_;
  float scale_;
};

// y = x op(W) + b; db += sum over rows of dy
class AffineNode : public Node {
public:
  AffineNode(Expr x, Expr W, Expr b, bool transW)
      : Node(x->graph(), dotShape(x, W, false, transW), {x, W, b}), transW_(transW) {
    ABORT_IF(b->shape().elements() != size_t(shape_.back()) || b->shape().back() != shape_.back(),
             "affine: bias {} does not match output {}", b->shape().toString(), shape_.toString());
  }
  const char* opName() const override { return "affine"; }
  // dA = dC B^T reads B, dB = A^T dC reads A; the product itself is not read
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i < 2 && child(1 - i)->needsGrad(); }
  bool readsChildAsProductOperand(size_t i) const override { return i < 2; }
  bool overwritesFreshChildGrad(size_t i) const override { return i < 2; }
  void forward() override {
    kernels::gemm(val_, child(0)->productVal(), child(1)->productVal(), false, transW_, 1.f, 0.f);
    kernels::binary(BinaryOp::Add, val_, val_, child(2)->val());
  }
  void backward() override {
    // the bias gradient first: the products may round grad_ in place, and then in the same pass
    Tensor dC = grad_, dA = childGrad(0), dB = childGrad(1);
    if(child(2)->needsGrad() && !dA.empty() && !dB.empty())
      dC = graph().roundInPlace(grad_, child(2)->grad());
    else if(child(2)->needsGrad())
      kernels::add(child(2)->grad(), grad_);
    productGrad(graph(), kernels::gemm, dA, dB, child(0)->productVal(), child(1)->productVal(), dC, false, transW_,
                1.f, childGradBeta(0), childGradBeta(1));
  }

private:
  bool transW_;
};

}  // namespace

Expr dot(Expr a, Expr b, bool transA, bool transB, float scale) {
  return a->graph().record<DotNode>(a, b, transA, transB, scale);
}
Expr bdot(Expr a, Expr b, bool transA, bool transB, float scale) {
  return a->graph().record<BdotNode>(a, b, transA, transB, scale);
}
Expr affine(Expr x, Expr W, Expr b, bool transW) {
  return x->graph().record<AffineNode>(x, W, b, transW);
}

}  // namespace marian
