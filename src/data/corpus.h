#pragma once
// defines: marian::Corpus — a line-aligned parallel corpus encoded to word ids and held in
// memory. Pairs with an empty side or a side longer than maxLength tokens (</s> included, as
// Marian counts) are skipped (counted).
#include <memory>
#include <string>
#include <vector>

#include "data/vocab.h"

namespace marian {

struct SentencePair {
  std::vector<int> src, trg;  // ids with </s> appended
  size_t line;                // 0-based line in the files
};

class Corpus {
public:
  // crop: cut long sentences to maxLength instead of skipping them (for validation)
  Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
         size_t maxLength, bool crop = false);

  size_t size() const { return pairs_.size(); }
  const SentencePair& operator[](size_t i) const { return pairs_[i]; }
  size_t skippedLong() const { return skippedLong_; }
  size_t skippedEmpty() const { return skippedEmpty_; }

private:
  std::vector<SentencePair> pairs_;
  size_t skippedLong_ = 0, skippedEmpty_ = 0;
};

}  // namespace marian
