#include "data/corpus.h"

#include <exception>
#include <thread>

#include "common/error.h"
#include "data/corpus_chunks.h"
#include "data/text_file.h"

namespace marian {

bool PairEncoder::encode(const std::string& srcLine, const std::string& trgLine, size_t line, SentencePair& p,
                         size_t& skippedEmpty, size_t& skippedLong) const {
  p.src = vocabs[0]->encode(srcLine);
  p.trg = vocabs[1]->encode(trgLine);
  p.line = line;
  if(p.src.size() <= 1 || p.trg.size() <= 1) {
    ++skippedEmpty;
    return false;
  }
  // lengths with </s>, as Marian counts them (corpus_base.cpp: words.size() > maxLength_)
  if(p.src.size() > maxLength || p.trg.size() > maxLength) {
    if(!crop) {
      ++skippedLong;
      return false;
    }
    for(int k = 0; k < 2; ++k) {
      std::vector<int>& side = k == 0 ? p.src : p.trg;
      if(side.size() > maxLength) {
        side.resize(maxLength);
        side.back() = vocabs[size_t(k)]->eosId();
      }
    }
  }
  return true;
}

Corpus::Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
               size_t maxLength, bool crop) {
  ABORT_IF(files.size() != 2 || vocabs.size() != 2, "A parallel corpus needs two files and two vocabularies");
  std::vector<std::string> src = readLines(files[0], "Corpus file");
  std::vector<std::string> trg = readLines(files[1], "Corpus file");
  ABORT_IF(src.size() != trg.size(), "Corpus files '{}' ({} lines) and '{}' ({} lines) differ in length",
           files[0], src.size(), files[1], trg.size());
  PairEncoder encoder{vocabs, maxLength, crop};
  pairs_.reserve(src.size());
  SentencePair p;
  for(size_t i = 0; i < src.size(); ++i)
    if(encoder.encode(src[i], trg[i], i, p, skippedEmpty_, skippedLong_))
      pairs_.push_back(std::move(p));
}

Corpus::Corpus(const CorpusChunks& chunks, const std::vector<size_t>& chunkIds, const PairEncoder& encoder,
               size_t threads) {
  ABORT_IF(encoder.vocabs.size() != 2, "A parallel corpus needs two vocabularies");
  // each chunk encoded into its own slot, then concatenated in the order given
  struct Encoded {
    std::vector<SentencePair> pairs;
    size_t empty = 0, longer = 0;
  };
  std::vector<Encoded> parts(chunkIds.size());
  std::vector<std::exception_ptr> failed(chunkIds.size());
  auto work = [&](size_t t, size_t workers) {
    for(size_t i = t; i < chunkIds.size(); i += workers) {
      try {
        std::vector<RawPair> raw = chunks.read(chunkIds[i]);
        Encoded& e = parts[i];
        e.pairs.reserve(raw.size());
        SentencePair p;
        for(const RawPair& r : raw)
          if(encoder.encode(r.src, r.trg, r.line, p, e.empty, e.longer))
            e.pairs.push_back(std::move(p));
      } catch(...) {
        failed[i] = std::current_exception();
        return;
      }
    }
  };
  size_t workers = std::max<size_t>(1, std::min(threads, chunkIds.size()));
  std::vector<std::thread> pool;
  for(size_t t = 1; t < workers; ++t)
    pool.emplace_back(work, t, workers);
  work(0, workers);
  for(auto& t : pool)
    t.join();
  for(auto& f : failed)  // the earliest bad chunk: the same error whatever the thread count
    if(f)
      std::rethrow_exception(f);
  size_t total = 0;
  for(const Encoded& e : parts)
    total += e.pairs.size();
  pairs_.reserve(total);
  for(Encoded& e : parts) {
    for(SentencePair& p : e.pairs)
      pairs_.push_back(std::move(p));
    skippedEmpty_ += e.empty;
    skippedLong_ += e.longer;
  }
}

}  // namespace marian
