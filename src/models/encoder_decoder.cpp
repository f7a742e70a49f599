#include "models/encoder_decoder.h"

#include "graph/operators.h"
#include "models/guided_alignment.h"

namespace marian {

Expr EncoderDecoder::loss(ExpressionGraph& graph, const Batch& batch, bool training) {
  Expr ce = labelCrossEntropies(graph, batch, training);
  if(!batch.trgWeights.empty()) {  // --data-weighting: each label's cross-entropy times its weight, as Marian's
    std::vector<float> weights;    // at the labels' positions, in their order
    for(size_t i = 0; i < batch.trgMask.size(); ++i)
      if(batch.trgMask[i] != 0.f)
        weights.push_back(batch.trgWeights[i]);
    int labels = int(weights.size());
    ce = ce * graph.constant({1, labels}, std::move(weights));
  }
  Expr total = sum(ce, -1);
  if(training && !batch.guidedAlignment.empty())  // as Marian's, training's alone (not validation's)
    total = total + guidedAlignmentCost(graph, batch, alignment_, guidedAlignmentWeight_);
  return total;
}

}  // namespace marian
