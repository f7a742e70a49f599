#pragma once
// defines: marian::SentencePair, marian::PairEncoder (the one rule by which a line pair becomes
// a training pair), marian::Corpus — encoded sentence pairs held in memory: the whole training
// corpus (--shuffle-in-ram, or a corpus that fits the shuffle window), one window of a streamed
// one, or a validation set.
#include <memory>
#include <string>
#include <vector>

#include "data/vocab.h"

namespace marian {

class CorpusChunks;

struct SentencePair {
  std::vector<int> src, trg;  // ids with </s> appended
  size_t line;                // 0-based line in the files
};

// Pairs with an empty side, or a side longer than maxLength tokens (</s> included, as Marian
// counts) are skipped and counted; with crop, long sides are cut to maxLength instead.
struct PairEncoder {
  std::vector<std::shared_ptr<Vocab>> vocabs;  // source, target
  size_t maxLength = 0;
  bool crop = false;

  // false: skipped (counted in skippedEmpty or skippedLong)
  bool encode(const std::string& src, const std::string& trg, size_t line, SentencePair& out, size_t& skippedEmpty,
              size_t& skippedLong) const;
};

class Corpus {
public:
  // Two line-aligned files read whole (validation sets).
  Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
         size_t maxLength, bool crop = false);
  // The chunks named, in that order, encoded by `threads` threads (the result does not depend
  // on their number).
  Corpus(const CorpusChunks& chunks, const std::vector<size_t>& chunkIds, const PairEncoder& encoder,
         size_t threads);

  size_t size() const { return pairs_.size(); }
  const SentencePair& operator[](size_t i) const { return pairs_[i]; }
  size_t skippedLong() const { return skippedLong_; }
  size_t skippedEmpty() const { return skippedEmpty_; }

private:
  std::vector<SentencePair> pairs_;
  size_t skippedLong_ = 0, skippedEmpty_ = 0;
};

}  // namespace marian
