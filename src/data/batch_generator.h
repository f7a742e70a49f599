#pragma once
// defines: marian::BatchGenerator — the mini-batches of one epoch, as Marian forms them: shuffle
// the corpus (from the seed and the epoch number), read maxi-batches of maxi-batch x mini-batch
// sentences, sort each by length, cut it into mini-batches (by sentences, by source words, or
// as many as fit the workspace at their length: --mini-batch-fit), and shuffle the mini-batches:
// as Marian does, within each maxi-batch (cut from its longest sentence down, so the leftover
// batch holds its shortest), or, with --shuffle-within-maxi-batch=false, over the whole epoch. An
// epoch is a pure function of (seed, epoch), so resuming at batch k of an epoch regenerates it
// and skips k batches.
#include <cstdint>
#include <string>
#include <vector>

#include "data/batch.h"

namespace marian {

// Whether a mini-batch of `sentences` sentences and `srcWords` source words (</s> counted) is
// full, as Marian decides it for training and decoding alike: with --mini-batch-words N once its
// words pass N (the sentence that passes them is its last), otherwise at --mini-batch sentences.
inline bool miniBatchIsFull(size_t sentences, size_t srcWords, size_t miniBatch, size_t miniBatchWords) {
  return miniBatchWords ? srcWords > miniBatchWords : sentences == miniBatch;
}

struct BatchingOptions {
  size_t miniBatch = 64;
  size_t miniBatchWords = 0;  // > 0: as Marian, a batch ends with the sentence whose source words (</s> counted) pass it
  // --mini-batch-fit (when not empty, it wins over both): fitSentences[k] sentences at most in
  // a batch whose longest sentence, source or target, has at most (k + 1) * fitStep tokens
  std::vector<size_t> fitSentences;
  size_t fitStep = 10;
  size_t maxiBatch = 100;
  std::string sortBy = "trg";  // none, src, trg
  bool shuffleData = true;     // shuffle the corpus before forming maxi-batches (--shuffle data)
  bool shuffleBatches = true;  // shuffle the order of the mini-batches (--shuffle data|batches)
  bool withinMaxiBatch = true;  // --shuffle-within-maxi-batch: Marian's order (see above)
  uint64_t seed = 1;

  // The options that cut an epoch into batches, as the command line gives them (the seed aside:
  // a resume takes the checkpoint's): a checkpoint records it, so that a resume knows whether
  // its batch count still means the same place in the epoch.
  std::string describe() const;
};

class BatchGenerator {
public:
  BatchGenerator(const Corpus& corpus, const BatchingOptions& options);

  // Forms the batches of `epoch` (1-based) and positions before the first.
  void startEpoch(size_t epoch);
  bool hasNext() const { return position_ < batches_.size(); }
  Batch next();
  void skip(size_t n);  // for resuming
  size_t position() const { return position_; }  // batches taken in this epoch
  size_t batchesInEpoch() const { return batches_.size(); }
  // The corpus indices of every batch of the epoch, in order.
  const std::vector<std::vector<size_t>>& epochBatches() const { return batches_; }

private:
  size_t fitSentences(size_t longest) const;  // --mini-batch-fit's limit at that length

  const Corpus& corpus_;
  BatchingOptions opt_;
  std::vector<std::vector<size_t>> batches_;
  size_t position_ = 0;
};

}  // namespace marian
