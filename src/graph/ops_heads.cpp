// Multi-head attention's layout change fused with skipping padding: position-wise layers work on
// the rows of the real positions only [N, dim]; attention needs every position of every sentence
// split into heads [B, H, T, dim/H]. rowOf (int32 [B*T], -1 for padding) connects the two.
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

void checkRowOf(Expr rowOf, int batch) {
  ABORT_IF(rowOf->valueType() != Type::int32, "toHeads/fromHeads: row numbers must be int32");
  ABORT_IF(batch <= 0 || rowOf->shape().elements() % size_t(batch) != 0,
           "toHeads/fromHeads: {} row numbers are not {} sentences of one length", rowOf->shape().elements(), batch);
}

Shape headsShape(Expr rows, Expr rowOf, int batch, int heads) {
  checkRowOf(rowOf, batch);
  ABORT_IF(rows->shape().rank() != 2 || heads <= 0 || rows->shape()[1] % heads != 0,
           "toHeads: rows {} do not split into {} heads", rows->shape().toString(), heads);
  int len = int(rowOf->shape().elements() / size_t(batch));
  return Shape({batch, heads, len, rows->shape()[1] / heads});
}

class ToHeadsNode : public Node {
public:
  ToHeadsNode(Expr rows, Expr rowOf, int batch, int heads)
      : Node(rows->graph(), headsShape(rows, rowOf, batch, heads), {rows, rowOf}) {}
  const char* opName() const override { return "to_heads"; }
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i == 1; }  // the row numbers
  void forward() override { kernels::headsFromRows(val_, child(0)->val(), child(1)->val(), false); }
  void backward() override {
    if(child(0)->needsGrad())
      kernels::rowsFromHeads(child(0)->grad(), grad_, child(1)->val(), true);
  }
};

Shape rowsShape(Expr heads, Expr rowOf, int rows) {
  const Shape& s = heads->shape();
  ABORT_IF(s.rank() != 4, "fromHeads: heads must be [B, H, T, d], got {}", s.toString());
  checkRowOf(rowOf, s[0]);
  ABORT_IF(rowOf->shape().elements() != size_t(s[0]) * s[2], "fromHeads: {} row numbers for heads {}",
           rowOf->shape().elements(), s.toString());
  ABORT_IF(rows <= 0 || size_t(rows) > rowOf->shape().elements(), "fromHeads: {} rows from {} positions", rows,
           rowOf->shape().elements());
  return Shape({rows, s[1] * s[3]});
}

class FromHeadsNode : public Node {
public:
  FromHeadsNode(Expr heads, Expr rowOf, int rows)
      : Node(heads->graph(), rowsShape(heads, rowOf, rows), {heads, rowOf}) {}
  const char* opName() const override { return "from_heads"; }
  bool backwardReadsValue() const override { return false; }
  bool backwardReadsChild(size_t i) const override { return i == 1; }
  // headsFromRows writes every position, zeros at padding (rowsFromHeads, ToHeadsNode's backward,
  // leaves rows no position names as they are, so that one cannot overwrite)
  bool overwritesFreshChildGrad(size_t i) const override { return i == 0; }
  void forward() override { kernels::rowsFromHeads(val_, child(0)->val(), child(1)->val(), false); }
  void backward() override {
    if(child(0)->needsGrad())
      kernels::headsFromRows(child(0)->grad(), grad_, child(1)->val(), !childGradFresh(0));
  }
};

}  // namespace

Expr toHeads(Expr rows, Expr rowOf, int batch, int heads) {
  return rows->graph().record<ToHeadsNode>(rows, rowOf, batch, heads);
}
Expr fromHeads(Expr heads, Expr rowOf, int rows) { return heads->graph().record<FromHeadsNode>(heads, rowOf, rows); }

}  // namespace marian
