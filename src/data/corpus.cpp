#include "data/corpus.h"

#include "common/error.h"
#include "data/text_file.h"

namespace marian {

Corpus::Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
               size_t maxLength, bool crop) {
  ABORT_IF(files.size() != 2 || vocabs.size() != 2, "A parallel corpus needs two files and two vocabularies");
  std::vector<std::string> src = readLines(files[0], "Corpus file");
  std::vector<std::string> trg = readLines(files[1], "Corpus file");
  ABORT_IF(src.size() != trg.size(), "Corpus files '{}' ({} lines) and '{}' ({} lines) differ in length",
           files[0], src.size(), files[1], trg.size());
  pairs_.reserve(src.size());
  for(size_t i = 0; i < src.size(); ++i) {
    SentencePair p{vocabs[0]->encode(src[i]), vocabs[1]->encode(trg[i]), i};
    if(p.src.size() <= 1 || p.trg.size() <= 1) {
      ++skippedEmpty_;
      continue;
    }
    // lengths with </s>, as Marian counts them (corpus_base.cpp: words.size() > maxLength_)
    if(p.src.size() > maxLength || p.trg.size() > maxLength) {
      if(!crop) {
        ++skippedLong_;
        continue;
      }
      for(int k = 0; k < 2; ++k) {
        std::vector<int>& side = k == 0 ? p.src : p.trg;
        if(side.size() > maxLength) {
          side.resize(maxLength);
          side.back() = vocabs[size_t(k)]->eosId();
        }
      }
    }
    pairs_.push_back(std::move(p));
  }
}

}  // namespace marian
