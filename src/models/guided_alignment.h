#pragma once
// defines: marian::guidedAlignmentCost — Marian's --guided-alignment cost (layers/guided_alignment.h,
// "ce"): the cross-entropy of the guided attention head against the batch's word alignments.
#include "data/batch.h"
#include "graph/expression_graph.h"

namespace marian {

// attention: P(source position | target position) [sentences, heads, trgLen, srcLen], the guided
// head first. Minus each alignment point's share (1 / the points on its target position) times
// the log of the head's probability there (+ 1e-6, Marian's epsilon), summed and times `weight`:
// [1, 1]. Training adds it to the translation's cost, and weight x the points to its labels.
Expr guidedAlignmentCost(ExpressionGraph& graph, const Batch& batch, Expr attention, float weight);

}  // namespace marian
