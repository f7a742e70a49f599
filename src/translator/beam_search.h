#pragma once
// defines: marian::BeamSearch — batched beam search over any EncoderDecoder, or an ensemble of
// them (Marian's: each step's log-probabilities summed, times each model's weight): the sources of a
// batch are encoded once; then at every step the live hypotheses of all sentences are scored
// together from their last word and the model's DecoderState (nothing recomputed from the
// prefix, nothing copied through the host but the log-probabilities), each sentence keeps its
// best (beam size - finished) continuations, the state keeps their parents' rows, and a
// hypothesis that emits </s> is finished. Beam size 1 is greedy decoding. As Marian's: <unk> is never chosen
// unless allowUnk, and at the length limit the hypotheses end with whatever word they chose.
#include <memory>
#include <vector>

#include "data/batch.h"
#include "data/word_alignment.h"
#include "graph/expression_graph.h"
#include "models/encoder_decoder.h"
#include "translator/output_sampling.h"

namespace marian {

struct BeamOptions {
  int beamSize = 12;
  // final score = (score - wordPenalty x length) / length^normalize (length with </s>), as Marian
  float normalize = 0.f;
  float wordPenalty = 0.f;
  float maxLengthFactor = 3.f;  // at most this many times the longest source of the batch (</s> included)
  bool maxLengthPerSentence = false;  // ... times the sentence's own source instead
  bool allowUnk = false;        // Marian's --allow-unk
  int eosId = 0, unkId = 1;     // the target vocabulary's
  OutputSampling sampling;      // Marian's --output-sampling (off by default)
  bool alignment = false;       // keep each hypothesis's soft alignment (Marian's --alignment)
};

struct Hypothesis {
  std::vector<int> words;  // without </s>
  float score = 0;         // summed (weighted) log-probabilities
  float normalized = 0;    // what the n-best list is sorted by: with the word penalty and normalisation
  std::vector<float> wordScores;  // each token's share of score, </s> included (Marian's --word-scores)
  // with BeamOptions::alignment, each token's (</s> included) P(source token) over the
  // sentence's source tokens: the model's alignment() at each step, as Marian's --alignment
  SoftAlignment alignment;
  // each model's own summed log-probability (Marian's n-best F0, F1, ...; one model: score)
  std::vector<float> modelScores;
};

// One model of an ensemble on one device, its graph holding its parameters, already loaded; its
// log-probabilities count `weight` times (Marian's --weights).
struct ScoringModel {
  EncoderDecoder* model;
  ExpressionGraph* graph;
  float weight = 1.f;
};

class BeamSearch {
public:
  // One model (the graph holds its parameters, already loaded).
  BeamSearch(EncoderDecoder& model, ExpressionGraph& graph, const BeamOptions& options);
  // An ensemble: the first model's attention gives --alignment (as Marian's).
  BeamSearch(std::vector<ScoringModel> models, const BeamOptions& options);
  ~BeamSearch();
  // For every sentence of the batch, its finished hypotheses, best first (at most beamSize).
  // samplingSeed: the batch's draws of --output-sampling (OutputSampling::batchKey).
  std::vector<std::vector<Hypothesis>> search(const Batch& batch, uint64_t samplingSeed = 0);

private:
  std::vector<ScoringModel> models_;
  BeamOptions options_;
  std::vector<std::unique_ptr<DecoderState>> states_;  // one a model; their memory serves every batch
};

}  // namespace marian
