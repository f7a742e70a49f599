// Layout operators. reshape is a view of its child's memory; transpose, concat and slice move
// data, and their gradients move it back (accumulating).
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

class ReshapeNode : public Node {
public:
  bool backwardReadsValue() const override { return false; }  // gradients only
  bool backwardReadsChild(size_t) const override { return false; }
  ReshapeNode(Expr x, const Shape& shape) : Node(x->graph(), shape, {x}, x->valueType()) {
    ABORT_IF(shape.elements() != x->shape().elements(), "reshape: cannot view {} as {}",
             x->shape().toString(), shape.toString());
  }
  const char* opName() const override { return "reshape"; }
  bool allocatesValue() const override { return false; }
  void forward() override { val_ = child(0)->val().reshaped(shape_); }
  void backward() override { kernels::add(child(0)->grad(), grad_); }
};

Shape permuted(const Shape& s, const std::vector<int>& perm) {
  ABORT_IF(int(perm.size()) != s.rank(), "transpose: permutation of {} axes for {}", perm.size(),
           s.toString());
  std::vector<bool> seen(perm.size(), false);
  std::vector<int> dims(perm.size());
  for(size_t i = 0; i < perm.size(); ++i) {
    int p = perm[i];
    ABORT_IF(p < 0 || p >= s.rank() || seen[p], "transpose: invalid permutation for {}", s.toString());
    seen[p] = true;
    dims[i] = s[p];
  }
  return Shape(dims);
}

class TransposeNode : public Node {
public:
  bool backwardReadsValue() const override { return false; }  // gradients only
  bool backwardReadsChild(size_t) const override { return false; }
  TransposeNode(Expr x, const std::vector<int>& perm)
      : Node(x->graph(), permuted(x->shape(), perm), {x}), perm_(perm), inverse_(perm.size()) {
    for(size_t i = 0; i < perm.size(); ++i)
      inverse_[perm[i]] = int(i);
  }
  const char* opName() const override { return "transpose"; }
  void forward() override { kernels::transpose(val_, child(0)->val(), perm_, false); }
  void backward() override { kernels::transpose(child(0)->grad(), grad_, inverse_, true); }

private:
  std::vector<int> perm_, inverse_;
};

Shape concatShape(const std::vector<Expr>& xs, int axis) {
  ABORT_IF(xs.empty(), "concat of nothing");
  Shape out = xs[0]->shape();
  int a = out.axis(axis), total = 0;
  for(Expr x : xs) {
    ABORT_IF(x->shape().rank() != out.rank(), "concat: ranks of {} and {} differ",
             out.toString(), x->shape().toString());
    for(int i = 0; i < out.rank(); ++i)
      ABORT_IF(i != a && x->shape()[i] != out[i], "concat along axis {}: {} and {} differ elsewhere",
               axis, out.toString(), x->shape().toString());
    total += x->shape()[a];
  }
  out[a] = total;
  return out;
}

class ConcatNode : public Node {
public:
  bool backwardReadsValue() const override { return false; }  // gradients only
  bool backwardReadsChild(size_t) const override { return false; }
  ConcatNode(const std::vector<Expr>& xs, int axis)
      : Node(xs[0]->graph(), concatShape(xs, axis), xs), axis_(xs[0]->shape().axis(axis)) {}
  const char* opName() const override { return "concat"; }
  void forward() override {
    int offset = 0;
    for(Expr x : children_) {
      kernels::insertSlice(val_, x->val(), axis_, offset, false);
      offset += x->shape()[axis_];
    }
  }
  void backward() override {
    int offset = 0;
    for(Expr x : children_) {
      if(x->needsGrad())
        kernels::extractSlice(x->grad(), grad_, axis_, offset, true);
      offset += x->shape()[axis_];
    }
  }

private:
  int axis_;
};

class SliceNode : public Node {
public:
  bool backwardReadsValue() const override { return false; }  // gradients only
  bool backwardReadsChild(size_t) const override { return false; }
  SliceNode(Expr x, int axis, int begin, int end)
      : Node(x->graph(), x->shape().with(axis, end - begin), {x}),
        axis_(x->shape().axis(axis)), begin_(begin) {
    ABORT_IF(begin < 0 || end > x->shape()[axis] || begin >= end,
             "slice [{}, {}) out of range for axis {} of {}", begin, end, axis,
             x->shape().toString());
  }
  const char* opName() const override { return "slice"; }
  void forward() override { kernels::extractSlice(val_, child(0)->val(), axis_, begin_, false); }
  void backward() override { kernels::insertSlice(child(0)->grad(), grad_, axis_, begin_, true); }

private:
  int axis_, begin_;
};

}  // namespace

Expr reshape(Expr x, const Shape& shape) { return x->graph().record<ReshapeNode>(x, shape); }
Expr transpose(Expr x, const std::vector<int>& perm) {
  return x->graph().record<TransposeNode>(x, perm);
}
Expr concat(const std::vector<Expr>& xs, int axis) {
  ABORT_IF(xs.empty(), "concat of nothing");
  return xs[0]->graph().record<ConcatNode>(xs, axis);
}
Expr slice(Expr x, int axis, int begin, int end) {
  return x->graph().record<SliceNode>(x, axis, begin, end);
}
std::vector<Expr> split(Expr x, int axis, int parts) {
  int n = x->shape()[axis];
  ABORT_IF(parts <= 0 || n % parts != 0, "split: axis {} of {} does not split into {} parts", axis,
           x->shape().toString(), parts);
  std::vector<Expr> out;
  for(int i = 0; i < parts; ++i)
    out.push_back(slice(x, axis, i * n / parts, (i + 1) * n / parts));
  return out;
}

}  // namespace marian
