#pragma once
// defines: the building blocks the models share: dense layers, layer normalisation, embeddings
// (with Marian's parameter names), sinusoidal positions, and the summed masked cross-entropy.
#include <string>
#include <vector>

#include "data/batch.h"
#include "graph/operators.h"

namespace marian {
namespace layers {

// x W + b with parameters prefix_W [in, out] and prefix_b [1, out]
Expr dense(ExpressionGraph& g, const std::string& prefix, Expr x, int out, bool bias = true);
// layer normalisation with prefix_ln_scale and prefix_ln_bias
Expr layerNorm(ExpressionGraph& g, const std::string& prefix, Expr x);
// an embedding table [vocab, dim]
Expr embeddingTable(ExpressionGraph& g, const std::string& name, int vocab, int dim);
// rows of table for ids [batch, len]: [batch, len, dim]
Expr embed(ExpressionGraph& g, Expr table, const std::vector<int>& ids, int batch, int len);
// sinusoidal positions [len, dim] (sines in the first half, cosines in the second, as Marian)
Expr positions(ExpressionGraph& g, int len, int dim, int start = 0);
// ids shifted right by one with a zero vector first: the decoder's inputs in training
Expr shiftRight(ExpressionGraph& g, Expr embeddings);
// logits [.., vocab] from h [.., dim]: tied to the target embeddings (h E^T + b) or own W
Expr outputLayer(ExpressionGraph& g, Expr h, Expr tiedEmbeddings, int vocab);
// The summed label-smoothed cross-entropy of the batch's target labels, [1, 1], from the
// decoder states h [batch, len, dim]. Only real (non-padding) positions go through the output
// layer: with batches of mixed lengths a third of the positions can be padding, and the output
// layer and its softmax over the vocabulary are the largest single cost of a step.
Expr summedCrossEntropy(ExpressionGraph& g, Expr h, Expr tiedEmbeddings, int vocab,
                        const Batch& batch, float smoothing);

}  // namespace layers
}  // namespace marian
