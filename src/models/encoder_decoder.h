#pragma once
// defines: marian::EncoderDecoder — the one interface through which the trainer and the
// validator use a translation model (transformer or s2s), and createModel, the factory.
#include <memory>
#include <string>

#include "common/options.h"
#include "data/batch.h"
#include "graph/expression_graph.h"

namespace marian {

class EncoderDecoder {
public:
  virtual ~EncoderDecoder() = default;
  // Builds the graph of a batch and returns the summed cross-entropy of its target labels
  // (label-smoothed in training, padding excluded), shape [1, 1]. training = dropout on.
  virtual Expr loss(ExpressionGraph& graph, const Batch& batch, bool training) = 0;
  virtual std::string type() const = 0;

  // Decoding, one target position at a time on a fixed source (beam search):
  // the encoder's states [sentences, srcLen, dim] of the batch's sources;
  virtual Expr encodeSources(ExpressionGraph& graph, const Batch& batch) = 0;
  // the log-probabilities [hyps, trgVocab] of each hypothesis' next word. `step` holds one row
  // per hypothesis: its source's mask (srcMask [hyps, srcLen]) and its words so far followed by
  // one ignored id (trgIds [hyps, t+1]); `context` the encoder states of each hypothesis' source
  // [hyps, srcLen, dim], a constant computed once by encodeSources.
  virtual Expr nextWordLogProbs(ExpressionGraph& graph, const Batch& step, Expr context) = 0;
};

// Model options come from the effective configuration (--type, --dim-emb, ...); vocabulary
// sizes from the loaded vocabularies.
std::unique_ptr<EncoderDecoder> createModel(const Options& options, size_t srcVocab, size_t trgVocab);

}  // namespace marian
