#include "models/guided_alignment.h"

#include "common/error.h"
#include "graph/operators.h"

namespace marian {

Expr guidedAlignmentCost(ExpressionGraph& g, const Batch& batch, Expr attention, float weight) {
  ABORT_IF(!attention, "--guided-alignment: this model gave no attention to guide");
  const Shape& shape = attention->shape();
  ABORT_IF(shape.rank() != 4 || shape[0] != batch.sentences || shape[2] != batch.trgLen || shape[3] != batch.srcLen,
           "--guided-alignment: attention {} for a batch of {} sentences, {} target and {} source positions",
           shape.toString(), batch.sentences, batch.trgLen, batch.srcLen);
  int heads = shape[1], trgLen = shape[2], srcLen = shape[3];
  std::vector<int> at;  // each point's element of the attention, flattened
  std::vector<float> shares;
  at.reserve(batch.guidedAlignment.size());
  shares.reserve(batch.guidedAlignment.size());
  for(const Batch::AlignmentLink& l : batch.guidedAlignment) {
    at.push_back(((l.sentence * heads) * trgLen + l.trg) * srcLen + l.src);
    shares.push_back(l.share);
  }
  int points = int(at.size());
  Expr flat = reshape(attention, {int(shape.elements()), 1});
  Expr picked = rows(flat, g.indices(std::move(at)));  // [points, 1]
  Expr logs = log(scaleShift(picked, 1.f, 1e-6f));
  return sum(g.constant({points, 1}, std::move(shares)) * logs, 0) * (-weight);
}

}  // namespace marian
