#pragma once
// defines: marian::EncoderDecoder — the one interface through which the trainer and the
// validator use a translation model (transformer or s2s), and createModel, the factory.
#include <memory>
#include <string>

#include "common/options.h"
#include "data/batch.h"
#include "graph/expression_graph.h"
#include "models/decoder_state.h"

namespace marian {

// What one decoding step knows of each row (hypothesis) of the decoder state.
struct DecodingStep {
  int position = 0;                          // of the word to predict; it has `position` words before it
  std::vector<int> lastWords;                // per row: its word at position - 1 (none at 0)
  // per row: its whole prefix and its sentence in the sources startDecoding was given, for a
  // model that recomputes from the prefix (the beam's own word lists, not copies)
  std::vector<const std::vector<int>*> prefixes;
  const std::vector<int>* sentences = nullptr;
};

class EncoderDecoder {
public:
  virtual ~EncoderDecoder() = default;
  // Builds the graph of a batch and returns the cross-entropy of each of its target labels
  // (label-smoothed in training, padding excluded), shape [1, labels]: the first sentence's in
  // order, then the second's, and so on. training = dropout on.
  virtual Expr labelCrossEntropies(ExpressionGraph& graph, const Batch& batch, bool training) = 0;
  // Their sum, [1, 1], each weighted by the batch's trgWeights where it has them (--data-weighting),
  // in training plus the guided alignment cost where the batch has alignments (--guided-alignment):
  // what training minimizes and validation reports.
  Expr loss(ExpressionGraph& graph, const Batch& batch, bool training);
  // --guided-alignment-weight (createModel sets it from training's options)
  void setGuidedAlignmentWeight(float weight) { guidedAlignmentWeight_ = weight; }
  // The attention that --guided-alignment guides and --alignment prints (the transformer's first
  // head of --transformer-guided-alignment-layer's context attention, the s2s' attention): after
  // labelCrossEntropies, P(source position | target position) [sentences, heads, trgLen, srcLen],
  // the guided head first; after decodeStep, [rows, srcLen], each row's P(source position) at
  // this step. Null unless wanted (wantAlignment, or a batch with guidedAlignment in training).
  Expr alignment() const { return alignment_; }
  void wantAlignment(bool wanted) { alignmentWanted_ = wanted; }

  // Incremental decoding (beam search). The model keeps what later steps need in `state`, one
  // row per hypothesis: the encoder's states and what is computed from them once, the keys and
  // values of earlier positions, recurrent states. Each call builds the graph of one step; the
  // caller runs forward and then state.keepRows.
  // Encodes the batch's sources: the state's rows are the batch's sentences.
  virtual void startDecoding(ExpressionGraph& graph, const Batch& sources, DecoderState& state) = 0;
  // The log-probabilities [rows, trgVocab] of each row's next word at position `step.position`
  // (0: the first word).
  virtual Expr decodeStep(ExpressionGraph& graph, const DecodingStep& step, DecoderState& state) = 0;

protected:
  // What alignment() returns: set by each labelCrossEntropies and decodeStep
  Expr alignment_;
  bool alignmentWanted_ = false;

private:
  float guidedAlignmentWeight_ = 0.1f;
};

// Model options come from the effective configuration (--type, --dim-emb, ...); vocabulary
// sizes from the loaded vocabularies.
std::unique_ptr<EncoderDecoder> createModel(const Options& options, size_t srcVocab, size_t trgVocab);

}  // namespace marian
