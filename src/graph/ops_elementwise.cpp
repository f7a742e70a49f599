// Element-wise operators: one node for unary functions, one for broadcasting binary functions.
// The maths of each function and of its derivative lives in tensors/functors.h.
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

class UnaryNode : public Node {
public:
  UnaryNode(Expr x, UnaryOp op, const char* name, float p0 = 0.f, float p1 = 0.f)
      : Node(x->graph(), x->shape(), {x}), op_(op), name_(name), p0_(p0), p1_(p1) {}
  const char* opName() const override { return name_; }
  // the functor's grad(x, y) reads y (exp, sqrt, sigmoid, tanh, relu), x (log, square, swish,
  // gelu) or neither (neg, scale-shift): tensors/functors.h
  bool backwardReadsValue() const override {
    return op_ == UnaryOp::Exp || op_ == UnaryOp::Sqrt || op_ == UnaryOp::Sigmoid || op_ == UnaryOp::Tanh ||
           op_ == UnaryOp::Relu;
  }
  bool backwardReadsChild(size_t) const override {
    return op_ == UnaryOp::Log || op_ == UnaryOp::Square || op_ == UnaryOp::Swish || op_ == UnaryOp::Gelu;
  }
  bool overwritesFreshChildGrad(size_t) const override { return true; }
  void forward() override { kernels::unary(op_, val_, child(0)->val(), p0_, p1_); }
  // dx (+)= dy * f'(x)
  void backward() override {
    kernels::unaryGrad(op_, childGrad(0), child(0)->val(), val_, grad_, !childGradFresh(0), p0_, p1_);
  }

private:
  UnaryOp op_;
  const char* name_;
  float p0_, p1_;
};

class BinaryNode : public Node {
public:
  BinaryNode(Expr a, Expr b, BinaryOp op, const char* name)
      : Node(a->graph(), Shape::broadcast(a->shape(), b->shape()), {a, b}), op_(op), name_(name) {}
  const char* opName() const override { return name_; }
  // add and sub read no value; mul reads the other operand for an operand's gradient; the others
  // read both
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override {
    if(op_ == BinaryOp::Add || op_ == BinaryOp::Sub)
      return false;
    return op_ != BinaryOp::Mul || child(1 - i)->needsGrad();
  }
  void forward() override { kernels::binary(op_, val_, child(0)->val(), child(1)->val()); }
  // da += reduce(dy * df/da), db += reduce(dy * df/db), summed over broadcast axes
  void backward() override {
    kernels::binaryGrad(op_, childGrad(0), childGrad(1), child(0)->val(), child(1)->val(), grad_);
  }

private:
  BinaryOp op_;
  const char* name_;
};

Expr unaryOp(Expr x, UnaryOp op, const char* name, float p0 = 0.f, float p1 = 0.f) {
  return x->graph().record<UnaryNode>(x, op, name, p0, p1);
}
Expr binaryOp(Expr a, Expr b, BinaryOp op, const char* name) {
  return a->graph().record<BinaryNode>(a, b, op, name);
}

}  // namespace

Expr operator+(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Add, "add"); }
Expr operator-(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Sub, "sub"); }
Expr operator*(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Mul, "mul"); }
Expr operator/(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Div, "div"); }
Expr maximum(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Maximum, "maximum"); }
Expr minimum(Expr a, Expr b) { return binaryOp(a, b, BinaryOp::Minimum, "minimum"); }
Expr maskFill(Expr scores, Expr mask) { return binaryOp(scores, mask, BinaryOp::MaskFill, "mask_fill"); }

Expr scaleShift(Expr x, float scale, float shift) {
  return unaryOp(x, UnaryOp::ScaleShift, "scale_shift", scale, shift);
}
Expr operator*(float s, Expr x) { return scaleShift(x, s, 0.f); }
Expr operator*(Expr x, float s) { return scaleShift(x, s, 0.f); }
Expr operator+(Expr x, float s) { return scaleShift(x, 1.f, s); }
Expr operator-(Expr x, float s) { return scaleShift(x, 1.f, -s); }
Expr operator-(Expr x) { return unaryOp(x, UnaryOp::Neg, "neg"); }
Expr exp(Expr x) { return unaryOp(x, UnaryOp::Exp, "exp"); }
Expr log(Expr x) { return unaryOp(x, UnaryOp::Log, "log"); }
Expr sqrt(Expr x) { return unaryOp(x, UnaryOp::Sqrt, "sqrt"); }
Expr square(Expr x) { return unaryOp(x, UnaryOp::Square, "square"); }
Expr sigmoid(Expr x) { return unaryOp(x, UnaryOp::Sigmoid, "sigmoid"); }
Expr tanh(Expr x) { return unaryOp(x, UnaryOp::Tanh, "tanh"); }
Expr relu(Expr x) { return unaryOp(x, UnaryOp::Relu, "relu"); }
Expr swish(Expr x) { return unaryOp(x, UnaryOp::Swish, "swish"); }
Expr gelu(Expr x) { return unaryOp(x, UnaryOp::Gelu, "gelu"); }

}  // namespace marian
