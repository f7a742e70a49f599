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
};

// Model options come from the effective configuration (--type, --dim-emb, ...); vocabulary
// sizes from the loaded vocabularies.
std::unique_ptr<EncoderDecoder> createModel(const Options& options, size_t srcVocab, size_t trgVocab);

}  // namespace marian
