#pragma once
// defines: marian::Batch — sentences padded to a rectangle, batch-major: ids[s * len + t].
#include <cstddef>
#include <vector>

#include "data/corpus.h"

namespace marian {

struct Batch {
  int sentences = 0;
  int srcLen = 0, trgLen = 0;          // longest sentence, </s> included
  std::vector<int> srcIds, trgIds;     // [sentences, len], padded with </s>
  std::vector<float> srcMask, trgMask; // 1 for words, 0 for padding
  // --data-weighting's weight of each target position, [sentences, trgLen] as trgIds (a sentence's
  // weight at each of its positions; 1 at padding); empty without weights
  std::vector<float> trgWeights;
  // --guided-alignment's points of each sentence (its source and target positions) and the share
  // each has of its target position (1 / the sentence's points on it, Marian's normalization);
  // in sentence order, empty without
  struct AlignmentLink {
    int sentence, src, trg;
    float share;
  };
  std::vector<AlignmentLink> guidedAlignment;
  size_t srcWords = 0, trgWords = 0;   // real tokens, </s> included (trgWords = labels)
  // Sentences of each mini-batch merged into this one (--optimizer-delay); empty: one batch.
  std::vector<int> parts;

  static Batch fromPairs(const Corpus& corpus, const std::vector<size_t>& indices);
  // The same of sentences held elsewhere (ids with </s>; marian-scorer's pairs).
  static Batch fromPairs(const std::vector<const std::vector<int>*>& sources,
                         const std::vector<const std::vector<int>*>& targets);
  // Sources only (translation): no target rows.
  static Batch fromSources(const std::vector<const std::vector<int>*>& sources);
  // Sentences [begin, begin + n), re-padded to their own longest length.
  Batch slice(int begin, int n) const;
  // The batches one after the other, as one batch that remembers them as its parts.
  static Batch merge(const std::vector<Batch>& batches);
  // The merged batches back (each re-padded), or this batch alone.
  std::vector<Batch> split() const;
};

}  // namespace marian
