// Embedding lookup: rows of a table at int32 indices; the gradient scatter-adds into the table
// (a word seen twice gets both contributions).
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

Shape rowsShape(Expr table, Expr indices) {
  ABORT_IF(table->shape().rank() != 2, "rows: the table must be a matrix, got {}",
           table->shape().toString());
  ABORT_IF(indices->valueType() != Type::int32, "rows: indices must be int32");
  std::vector<int> dims = indices->shape().dims();
  dims.push_back(table->shape().back());
  return Shape(dims);
}

class RowsNode : public Node {
public:
  RowsNode(Expr table, Expr indices)
      : Node(table->graph(), rowsShape(table, indices), {table, indices}) {}
  const char* opName() const override { return "rows"; }
  void forward() override { kernels::gatherRows(val_, child(0)->val(), child(1)->val()); }
  void backward() override { kernels::scatterAddRows(child(0)->grad(), child(1)->val(), grad_); }
  bool addsRowsToChild(size_t i) const override { return i == 0; }
};

}  // namespace

Expr rows(Expr table, Expr indices) { return table->graph().record<RowsNode>(table, indices); }

}  // namespace marian
