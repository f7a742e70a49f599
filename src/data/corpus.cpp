#include "data/corpus.h"

#include <algorithm>
#include <exception>
#include <thread>

#include "common/error.h"
#include "data/corpus_chunks.h"
#include "data/text_file.h"

namespace marian {

bool PairEncoder::encode(const std::string& srcLine, const std::string& trgLine, size_t line, SentencePair& p,
                         size_t& skippedEmpty, size_t& skippedLong, const std::string& weights,
                         const std::string& alignment) const {
  p.src = vocabs[0]->encode(srcLine);
  p.trg = vocabs[1]->encode(trgLine);
  p.line = line;
  p.weights.clear();
  p.alignment.clear();
  if(p.src.size() <= 1 || p.trg.size() <= 1) {
    ++skippedEmpty;
    return false;
  }
  // lengths with </s>, as Marian counts them (corpus_base.cpp: words.size() > maxLength_)
  size_t srcTokens = p.src.size(), trgTokens = p.trg.size();  // before a crop
  if(p.src.size() > maxLength || p.trg.size() > maxLength) {
    if(!crop) {
      ++skippedLong;
      return false;
    }
    // cropped to </s> alone, a side would be the empty sentence every corpus skips
    ABORT_IF(maxLength < 2, "--max-length-crop needs --max-length 2 or more (a word and </s>), not {}", maxLength);
    cropWords(p.src, maxLength, vocabs[0]->eosId());
    cropWords(p.trg, maxLength, vocabs[1]->eosId());
  }
  if(weighting != DataWeighting::none)
    readWeights(weights, line, p);
  if(guidedAlignment)
    readAlignment(alignment, line, srcTokens, trgTokens, p);
  if(rightLeft) {
    reverseWords(p.src);
    reverseWords(p.trg);
    if(weighting == DataWeighting::word)
      reverseWords(p.weights);
    // a word's position i of n tokens (</s> last) is n - 2 - i once reversed; </s> stays
    for(AlignmentPoint& a : p.alignment) {
      if(a.src + 1 < p.src.size())
        a.src = uint32_t(p.src.size() - 2 - a.src);
      if(a.trg + 1 < p.trg.size())
        a.trg = uint32_t(p.trg.size() - 2 - a.trg);
    }
  }
  return true;
}

void PairEncoder::readAlignment(const std::string& text, size_t line, size_t srcTokens, size_t trgTokens,
                                SentencePair& p) const {
  size_t srcEos = p.src.size() - 1, trgEos = p.trg.size() - 1;
  forEachAlignmentPoint(text.data(), text.size(), [&](AlignmentPoint a) {
    ABORT_IF(a.src >= srcTokens || a.trg >= trgTokens,
             "{} line {}: the point {}-{} is past the pair's {} source and {} target tokens (</s> included); "
             "alignments count the vocabulary's tokens (SentencePiece pieces), from 0",
             alignmentSource, line + 1, a.src, a.trg, srcTokens, trgTokens);
    // a cropped side's </s> took the place of its last kept word: points on that word and on
    // those cut go with them
    bool cut = (p.src.size() < srcTokens && a.src >= srcEos) || (p.trg.size() < trgTokens && a.trg >= trgEos);
    if(!cut)
      p.alignment.push_back(a);
  });
  p.alignment.push_back(AlignmentPoint{uint32_t(srcEos), uint32_t(trgEos)});  // as Marian, for both </s>
}

bool cropWords(std::vector<int>& ids, size_t maxLength, int eosId) {
  if(ids.size() <= maxLength)
    return false;
  ids.resize(maxLength);
  ids.back() = eosId;
  return true;
}

void PairEncoder::readWeights(const std::string& text, size_t line, SentencePair& p) const {
  // numbers separated by spaces, as the corpus pass checked (which named a line with another)
  forEachWeight(text.data(), text.size(), [&](float w) { p.weights.push_back(w); });
  size_t given = p.weights.size(), tokens = p.trg.size();
  if(weighting == DataWeighting::sentence)
    return;
  if(crop && given > maxLength)  // as the target was cropped (Marian cuts the weights at --max-length)
    p.weights.resize(maxLength);
  size_t n = p.weights.size();
  ABORT_IF(n != tokens && n + 1 != tokens,
           "{} line {} has {} weights for {} target tokens ({} with </s>): --data-weighting-type word takes one a "
           "token, </s>'s left out or not",
           weightsSource, line + 1, given, tokens - 1, tokens);
  p.weights.resize(tokens, 1.f);  // </s>'s, when left out
}

std::string PairEncoder::describe() const {
  return "--max-length " + std::to_string(maxLength) + (crop ? " --max-length-crop" : "");
}

Corpus::Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
               size_t maxLength, bool crop, bool rightLeft) {
  ABORT_IF(files.size() != 2 || vocabs.size() != 2, "A parallel corpus needs two files and two vocabularies");
  std::vector<std::string> src = readLines(files[0], "Corpus file");
  std::vector<std::string> trg = readLines(files[1], "Corpus file");
  ABORT_IF(src.size() != trg.size(), "Corpus files '{}' ({} lines) and '{}' ({} lines) differ in length",
           files[0], src.size(), files[1], trg.size());
  PairEncoder encoder{vocabs, maxLength, crop, DataWeighting::none, rightLeft};
  std::vector<Builder> all(1);
  SentencePair p;
  for(size_t i = 0; i < src.size(); ++i)
    if(encoder.encode(src[i], trg[i], i, p, all[0].skippedEmpty, all[0].skippedLong))
      all[0].add(p);
  join(all);
}

void Corpus::Builder::add(const SentencePair& p) {
  begins.push_back(ids.size());
  ids.insert(ids.end(), p.src.begin(), p.src.end());
  ids.insert(ids.end(), p.trg.begin(), p.trg.end());
  srcLengths.push_back(uint32_t(p.src.size()));
  trgLengths.push_back(uint32_t(p.trg.size()));
  lines.push_back(p.line);
  weights.insert(weights.end(), p.weights.begin(), p.weights.end());
  if(!p.alignment.empty()) {
    alignment.insert(alignment.end(), p.alignment.begin(), p.alignment.end());
    alignmentCounts.push_back(uint32_t(p.alignment.size()));
  }
}

void Corpus::join(std::vector<Builder>& parts) {
  size_t pairs = 0, ids = 0, weights = 0, points = 0;
  for(const Builder& b : parts) {
    pairs += b.begins.size();
    ids += b.ids.size();
    weights += b.weights.size();
    points += b.alignment.size();
  }
  ids_.reserve(ids);
  pairs_.reserve(pairs);
  weights_.reserve(weights);
  // with alignments every pair has one point at least (</s>-</s>)
  alignment_.reserve(points);
  alignmentBegins_.reserve(points > 0 ? pairs + 1 : 0);
  if(points > 0)
    alignmentBegins_.push_back(0);
  // a weight a target token (a target has two at least, </s> included), else one a pair, or none
  bool perToken = weights > pairs;
  weightBegins_.reserve(perToken ? pairs : 0);
  for(Builder& b : parts) {
    uint64_t offset = ids_.size(), weightAt = weights_.size();
    ids_.insert(ids_.end(), b.ids.begin(), b.ids.end());
    weights_.insert(weights_.end(), b.weights.begin(), b.weights.end());
    alignment_.insert(alignment_.end(), b.alignment.begin(), b.alignment.end());
    for(uint32_t count : b.alignmentCounts)
      alignmentBegins_.push_back(alignmentBegins_.back() + count);
    for(size_t i = 0; i < b.begins.size(); ++i) {
      pairs_.push_back(Entry{offset + b.begins[i], b.srcLengths[i], b.trgLengths[i], b.lines[i]});
      if(perToken) {
        weightBegins_.push_back(weightAt);
        weightAt += b.trgLengths[i];
      }
    }
    skippedEmpty_ += b.skippedEmpty;
    skippedLong_ += b.skippedLong;
    b = Builder();  // each part freed once copied
  }
}

Corpus::Corpus(const CorpusChunks& chunks, const std::vector<size_t>& chunkIds, const PairEncoder& encoder,
               size_t threads, const EncodingControl& control) {
  ABORT_IF(encoder.vocabs.size() != 2, "A parallel corpus needs two vocabularies");
  // each chunk encoded into its own part, then joined in the order given
  std::vector<Builder> parts(chunkIds.size());
  std::vector<std::exception_ptr> failed(chunkIds.size());
  std::atomic<bool> cancelled{false};
  auto work = [&](size_t t, size_t workers) {
    if(control.onThreadStart)
      control.onThreadStart();
    for(size_t i = t; i < chunkIds.size(); i += workers) {
      if(control.cancelled && control.cancelled->load()) {
        cancelled = true;
        break;
      }
      try {
        std::vector<RawPair> raw = chunks.read(chunkIds[i]);
        Builder& b = parts[i];
        SentencePair p;
        for(const RawPair& r : raw)
          if(encoder.encode(r.src, r.trg, r.line, p, b.skippedEmpty, b.skippedLong, r.weights, r.alignment))
            b.add(p);
      } catch(...) {
        failed[i] = std::current_exception();
        break;
      }
    }
    if(control.onThreadEnd)
      control.onThreadEnd();
  };
  size_t workers = std::max<size_t>(1, std::min(threads, chunkIds.size()));
  std::vector<std::thread> pool;
  for(size_t t = 1; t < workers; ++t)
    pool.emplace_back(work, t, workers);
  work(0, workers);
  for(auto& t : pool)
    t.join();
  if(cancelled)
    throw EncodingCancelled();
  for(auto& f : failed)  // the earliest bad chunk: the same error whatever the thread count
    if(f)
      std::rethrow_exception(f);
  join(parts);
}

}  // namespace marian
