#pragma once
// defines: the building blocks the models share: dense layers, layer normalisation, embeddings
// (with Marian's parameter names), sinusoidal positions, and the summed masked cross-entropy.
#include <string>
#include <vector>

#include "data/batch.h"
#include "graph/operators.h"

namespace marian {
namespace layers {

// x W + b with parameters prefix_W<suffix> [in, out] and prefix_b<suffix> [1, out] (Marian's
// denseInline names: encoder_l1_ffn_W1, encoder_l1_ffn_b1)
Expr dense(ExpressionGraph& g, const std::string& prefix, Expr x, int out, bool bias = true,
           const std::string& suffix = "");
// layer normalisation with prefix_ln_scale<suffix> and prefix_ln_bias<suffix> (Marian's
// pre-norms end in _pre: encoder_l1_self_Wo_ln_scale_pre)
Expr layerNorm(ExpressionGraph& g, const std::string& prefix, Expr x, const std::string& suffix = "");
// an embedding table [vocab, dim]
Expr embeddingTable(ExpressionGraph& g, const std::string& name, int vocab, int dim);
// rows of table for ids [batch, len]: [batch, len, dim]
Expr embed(ExpressionGraph& g, Expr table, const std::vector<int>& ids, int batch, int len);
// sinusoidal positions [times.size(), dim] of the positions `times` (sines in the first half,
// cosines in the second, as Marian)
Expr positions(ExpressionGraph& g, const std::vector<int>& times, int dim);

// The real positions (words and </s>, not padding) of `sentences` sentences padded to `length`,
// in sentence order: position-wise layers compute on their rows only (unsorted batches can be a
// third padding). rowOf gives each position's row, -1 for padding (toHeads/fromHeads).
struct RealPositions {
  int sentences = 0, length = 0;
  std::vector<int> rowOf;  // [sentences * length]
  std::vector<int> flat;   // by row: its position b * length + t
  std::vector<int> times;  // by row: t
  int rows() const { return int(flat.size()); }
  // the entries of a per-position array (ids [sentences * length]) at the rows
  std::vector<int> pick(const std::vector<int>& perPosition) const;
};
RealPositions realPositions(const std::vector<float>& mask, int sentences, int length);
// every position real (one row per position)
RealPositions allPositions(int sentences, int length);
// ids shifted right by one with a zero vector first: the decoder's inputs in training
Expr shiftRight(ExpressionGraph& g, Expr embeddings);
// logits [.., vocab] from h [.., dim]: tied to the target embeddings (h E^T + b) or its own
// decoder_ff_logit_out_Wt [vocab, dim], transposed as Marian v1.12 keeps it (h Wt^T + b), and
// the bias decoder_ff_logit_out_b [1, vocab]. `prefix` names them: the transformer's
// decoder_ff_logit_out, the s2s's decoder_ff_logit_l2 (Marian's mlp::Output prefixes).
Expr outputLayer(ExpressionGraph& g, Expr h, Expr tiedEmbeddings, int vocab,
                 const std::string& prefix = "decoder_ff_logit_out");
// The label-smoothed cross-entropy of each of the batch's target labels, [1, labels] (sentence by
// sentence, as EncoderDecoder::labelCrossEntropies), from the decoder states h [batch, len, dim]. Only real (non-padding) positions go through the output
// layer: with batches of mixed lengths a third of the positions can be padding, and the output
// layer and its softmax over the vocabulary are the largest single cost of a step.
// `prefix` names the output layer's parameters, as in outputLayer.
Expr labelCrossEntropies(ExpressionGraph& g, Expr h, Expr tiedEmbeddings, int vocab, const Batch& batch,
                         float smoothing, const std::string& prefix = "decoder_ff_logit_out");
// the same from the states h [labels, dim] of the real target positions only and their labels
Expr crossEntropiesOfRows(ExpressionGraph& g, Expr h, Expr tiedEmbeddings, int vocab, std::vector<int> labels,
                          float smoothing, const std::string& prefix = "decoder_ff_logit_out");

}  // namespace layers
}  // namespace marian
