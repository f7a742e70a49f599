#pragma once
// defines: marian::Scorer — what a model says of given translations: each target's
// log-probability given its source, teacher-forced as validation's cross-entropy is computed
// (no label smoothing, no dropout), on one graph per device, the pairs batched as marian-scorer's
// options say and the scores returned in input order.
#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "data/vocab.h"
#include "data/word_alignment.h"
#include "translator/device_models.h"

namespace marian {

// How pairs become mini-batches: --mini-batch pairs, or with --mini-batch-words until their
// source words pass it; sorted within windows of --maxi-batch mini-batches by --maxi-batch-sort
// (none, src, trg), so a mini-batch pads little.
struct ScoringBatches {
  size_t miniBatch, miniBatchWords, maxiBatch;
  std::string sortBy;
  size_t workspaceMB;
};
// marian-scorer's (--mini-batch, --mini-batch-words, --maxi-batch, --maxi-batch-sort, --workspace).
ScoringBatches scoringBatches(const Options& options);

struct PairScore {
  double logProb = 0;               // the sum of its target labels' log-probabilities (</s> included)
  size_t labels = 0;                // the target's tokens, </s> included
  std::vector<float> wordLogProbs;  // each label's, when asked for
  SoftAlignment alignment;          // when asked for: each target token's P(source token) (Model::alignment)
};

class Scorer {
public:
  Scorer(const Options& modelOptions, const std::vector<std::shared_ptr<Vocab>>& vocabs,
         const std::vector<Device>& devices, const ScoringBatches& batches);
  // Parameter values from a model file (DeviceModels::load).
  void load(const std::string& modelPath) { models_.load(modelPath); }
  size_t parameterCount() const { return models_.parameterCount(); }

  // The pairs' scores, in their order: sources[i] and targets[i] are ids with </s> in reading
  // order (a right-left model reverses them; its word log-probabilities stay in its order, as
  // Marian's, its alignments come back in reading order).
  std::vector<PairScore> score(std::vector<std::vector<int>> sources, std::vector<std::vector<int>> targets,
                               bool wordLogProbs, bool alignments = false);

private:
  DeviceModels models_;
  ScoringBatches batches_;
  bool rightLeft_;
};

}  // namespace marian
