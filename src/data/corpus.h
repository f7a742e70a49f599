#pragma once
// defines: marian::IdSpan, marian::PairView, marian::SentencePair, marian::PairEncoder (the one
// rule by which a line pair, its --data-weighting weights and --guided-alignment alignments,
// becomes a training pair; Marian's
// --right-left reversal, reverseWords), marian::Corpus — encoded sentence pairs
// held in memory: the whole training corpus (--shuffle-in-ram, or a corpus that fits the shuffle
// window), one window of a streamed one, or a validation set. A Corpus keeps every id in one
// array and 24 bytes per pair beside it: millions of small vectors would cost several times the
// memory, scattered over the allocator's per-thread arenas, and never go back to the system.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/vocab.h"
#include "data/word_alignment.h"

namespace marian {

class CorpusChunks;

// A sentence's ids (with </s>), a view into the memory of its Corpus.
struct IdSpan {
  const int* data = nullptr;
  size_t length = 0;
  size_t size() const { return length; }
  const int* begin() const { return data; }
  const int* end() const { return data + length; }
  int operator[](size_t i) const { return data[i]; }
  int back() const { return data[length - 1]; }
};

struct PairView {
  IdSpan src, trg;
  size_t line;  // 0-based line in the files
  // --data-weighting's: one weight (sentence) or one per target token (word); none: nullptr
  const float* weights = nullptr;
  size_t weightCount = 0;
  // --guided-alignment's points (</s>-</s> last); none: nullptr
  const AlignmentPoint* alignment = nullptr;
  size_t alignmentCount = 0;
};

// How a pair's weights are read (--data-weighting-type): none, one a sentence, one a target token.
enum class DataWeighting { none, sentence, word };

// Marian's --right-left: a sentence's words (ids with </s>) in reverse order, </s> kept last; the
// same of a target's weights, one a token with </s>'s last (Marian reverses a line of weights as
// written, so a line that gives </s>'s weight, or a cropped one, moves it).
template <class T>
void reverseWords(std::vector<T>& values) {
  if(!values.empty())
    std::reverse(values.begin(), values.end() - 1);
}
// Marian's crop of a sentence longer than maxLength tokens (</s> included): its first words and
// </s>. Whether it was cropped.
bool cropWords(std::vector<int>& ids, size_t maxLength, int eosId);

// One pair as the encoder makes it.
struct SentencePair {
  std::vector<int> src, trg;  // ids with </s> appended
  size_t line;                // 0-based line in the files
  std::vector<float> weights;  // as DataWeighting says: empty, 1, or trg.size()
  // --guided-alignment's points in src and trg, </s>-</s> last (Marian adds it); empty without
  std::vector<AlignmentPoint> alignment;
};

// Pairs with an empty side, or a side longer than maxLength tokens (</s> included, as Marian
// counts) are skipped and counted; with crop, long sides are cut to maxLength instead.
struct PairEncoder {
  std::vector<std::shared_ptr<Vocab>> vocabs;  // source, target
  size_t maxLength = 0;
  bool crop = false;
  DataWeighting weighting = DataWeighting::none;
  bool rightLeft = false;  // --right-left: both sides' words reversed (after cropping, as Marian)
  std::string weightsSource = "Weights";  // where the weights are, for errors: "Weights file 'w.txt'"
  bool guidedAlignment = false;             // pairs carry --guided-alignment's points
  std::string alignmentSource = "Alignments";  // where they are, for errors: "Alignment file 'a.txt'"

  // The options that decide which pairs an epoch holds and how long they are, as the command line
  // gives them: "--max-length 100", with " --max-length-crop" when on.
  std::string describe() const;
  // false: skipped (counted in skippedEmpty or skippedLong). `weights`: the pair's line of weights
  // (numbers separated by spaces, which the corpus pass checked); as Marian, a word's weights are
  // one per target token, </s>'s left out or not (then 1), cut as the target is cropped; another
  // count is an error naming the line. `alignment`: the pair's line of word alignments (which the
  // corpus pass checked): a point past a sentence's tokens (before a crop) is an error naming the
  // line, points on words a crop cut go with them, </s>-</s> is added, and --right-left reverses
  // them with the words.
  bool encode(const std::string& src, const std::string& trg, size_t line, SentencePair& out, size_t& skippedEmpty,
              size_t& skippedLong, const std::string& weights = "", const std::string& alignment = "") const;

private:
  void readWeights(const std::string& text, size_t line, SentencePair& out) const;
  // srcTokens, trgTokens: the pair's before a crop
  void readAlignment(const std::string& text, size_t line, size_t srcTokens, size_t trgTokens, SentencePair& out) const;
};

// How a caller steers an encoding of chunks: every encoding thread calls onThreadStart first and
// onThreadEnd last (a streamed corpus sets their priority), and the encoding stops at the next
// chunk once *cancelled is true.
struct EncodingControl {
  std::function<void()> onThreadStart, onThreadEnd;
  const std::atomic<bool>* cancelled = nullptr;
};
// What a cancelled encoding throws (not an error: its caller asked for it).
struct EncodingCancelled : std::exception {
  const char* what() const noexcept override { return "encoding cancelled"; }
};

class Corpus {
public:
  // Two line-aligned files read whole (validation sets).
  Corpus(const std::vector<std::string>& files, const std::vector<std::shared_ptr<Vocab>>& vocabs,
         size_t maxLength, bool crop = false, bool rightLeft = false);
  // The chunks named, in that order, encoded by `threads` threads (the result does not depend
  // on their number); `control`: see EncodingControl (a cancelled encoding throws
  // EncodingCancelled).
  Corpus(const CorpusChunks& chunks, const std::vector<size_t>& chunkIds, const PairEncoder& encoder,
         size_t threads, const EncodingControl& control = EncodingControl());

  size_t size() const { return pairs_.size(); }
  PairView operator[](size_t i) const {
    const Entry& e = pairs_[i];
    const float* weights = weights_.empty() ? nullptr : weights_.data() + (weightBegins_.empty() ? i : weightBegins_[i]);
    bool aligned = !alignmentBegins_.empty();
    return PairView{IdSpan{ids_.data() + e.begin, e.srcLength}, IdSpan{ids_.data() + e.begin + e.srcLength, e.trgLength},
                    size_t(e.line), weights, weights ? (weightBegins_.empty() ? 1 : size_t(e.trgLength)) : 0,
                    aligned ? alignment_.data() + alignmentBegins_[i] : nullptr,
                    aligned ? size_t(alignmentBegins_[i + 1] - alignmentBegins_[i]) : 0};
  }
  size_t skippedLong() const { return skippedLong_; }
  size_t skippedEmpty() const { return skippedEmpty_; }
  size_t bytes() const {
    return ids_.capacity() * sizeof(int) + pairs_.capacity() * sizeof(Entry) + weights_.capacity() * sizeof(float) +
           (weightBegins_.capacity() + alignmentBegins_.capacity()) * sizeof(uint64_t) +
           alignment_.capacity() * sizeof(AlignmentPoint);
  }

  // Pairs in the making: appended one by one, then joined into a Corpus.
  struct Builder {
    std::vector<int> ids;
    std::vector<uint64_t> begins, lines;
    std::vector<uint32_t> srcLengths, trgLengths;
    std::vector<float> weights;  // every pair's, one after the other
    std::vector<AlignmentPoint> alignment;  // every pair's, one after the other
    std::vector<uint32_t> alignmentCounts;  // a pair's points (empty without)
    size_t skippedLong = 0, skippedEmpty = 0;
    void add(const SentencePair& p);
  };

private:
  struct Entry {
    uint64_t begin;                   // of the source ids in ids_; the target's follow
    uint32_t srcLength, trgLength;
    uint64_t line;
  };
  void join(std::vector<Builder>& parts);  // in order, into exactly sized arrays

  std::vector<int> ids_;
  std::vector<Entry> pairs_;
  // --data-weighting's weights: one a pair (sentence), or one a target token, pair i's from
  // weightBegins_[i] (word); both empty without weights
  std::vector<float> weights_;
  std::vector<uint64_t> weightBegins_;
  // --guided-alignment's points: pair i's from alignmentBegins_[i] to alignmentBegins_[i + 1];
  // both empty without
  std::vector<AlignmentPoint> alignment_;
  std::vector<uint64_t> alignmentBegins_;
  size_t skippedLong_ = 0, skippedEmpty_ = 0;
};

}  // namespace marian
