#include "data/batch_generator.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "common/error.h"

namespace marian {

BatchGenerator::BatchGenerator(const Corpus& corpus, const BatchingOptions& options)
    : corpus_(corpus), opt_(options) {
  ABORT_IF(opt_.miniBatch == 0 && opt_.miniBatchWords == 0, "--mini-batch must be positive");
  ABORT_IF(!opt_.fitSentences.empty() && opt_.fitStep == 0, "--mini-batch-fit-step must be positive");
  ABORT_IF(opt_.sortBy != "none" && opt_.sortBy != "src" && opt_.sortBy != "trg",
           "--maxi-batch-sort must be none, src or trg, not '{}'", opt_.sortBy);
}

std::string BatchingOptions::describe() const {
  std::string d = "--mini-batch " + std::to_string(miniBatch) + " --mini-batch-words " + std::to_string(miniBatchWords) +
                  " --maxi-batch " + std::to_string(maxiBatch) + " --maxi-batch-sort " + sortBy +
                  " --shuffle " + (shuffleData ? "data" : shuffleBatches ? "batches" : "none");
  if(withinMaxiBatch)  // named when on: a checkpoint from before it was the default reads as another cut
    d += " --shuffle-within-maxi-batch";
  if(!fitSentences.empty()) {  // the sizes found for --workspace, which decide the cut
    d += " --mini-batch-fit-step " + std::to_string(fitStep) + " --mini-batch-fit (";
    for(size_t k = 0; k < fitSentences.size(); ++k)
      d += (k ? " " : "") + std::to_string(fitSentences[k]);
    d += " sentences)";
  }
  return d;
}

void BatchGenerator::startEpoch(size_t epoch) {
  std::mt19937_64 rng(opt_.seed * 1000003ull + epoch);
  std::vector<size_t> order(corpus_.size());
  std::iota(order.begin(), order.end(), 0);
  if(opt_.shuffleData)
    std::shuffle(order.begin(), order.end(), rng);

  // A maxi-batch holds --mini-batch x --maxi-batch sentences, as Marian's (with --mini-batch-words
  // and --mini-batch-fit too); with --mini-batch-words and --mini-batch 0, as many as make about
  // --maxi-batch mini-batches at the corpus' mean length.
  size_t perMini = opt_.miniBatch;
  if(opt_.miniBatchWords && opt_.fitSentences.empty() && perMini == 0) {
    size_t words = 0;
    for(size_t i = 0; i < corpus_.size(); ++i)
      words += corpus_[i].src.size();
    perMini = std::max<size_t>(1, opt_.miniBatchWords * corpus_.size() / std::max<size_t>(words, 1));
  }
  size_t maxi = std::max<size_t>(1, opt_.maxiBatch) * std::max<size_t>(1, perMini);

  auto length = [&](size_t i) {
    PairView p = corpus_[i];
    return opt_.sortBy == "src" ? std::make_pair(p.src.size(), p.trg.size())
                                : std::make_pair(p.trg.size(), p.src.size());
  };

  batches_.clear();
  for(size_t begin = 0; begin < order.size(); begin += maxi) {
    size_t end = std::min(order.size(), begin + maxi);
    std::vector<size_t> chunk(order.begin() + begin, order.begin() + end);
    if(opt_.sortBy != "none")
      std::stable_sort(chunk.begin(), chunk.end(), [&](size_t a, size_t b) { return length(a) < length(b); });
    // Marian's priority queue gives the longest first; unsorted, the lines keep file order (where
    // Marian's queue would read a maxi-batch from its end), so that --shuffle none is file order
    if(opt_.withinMaxiBatch && opt_.sortBy != "none")
      std::reverse(chunk.begin(), chunk.end());
    size_t chunkFirst = batches_.size();
    std::vector<size_t> current;
    size_t maxLonger = 0, srcWords = 0;  // the batch's longest of source and target; its source words
    for(size_t i : chunk) {
      size_t longer = std::max(corpus_[i].trg.size(), corpus_[i].src.size());
      bool full;
      if(!opt_.fitSentences.empty())
        full = !current.empty() && current.size() + 1 > fitSentences(std::max(maxLonger, longer));
      else
        full = miniBatchIsFull(current.size(), srcWords, opt_.miniBatch, opt_.miniBatchWords);
      if(full) {
        batches_.push_back(std::move(current));
        current.clear();
        maxLonger = srcWords = 0;
      }
      current.push_back(i);
      maxLonger = std::max(maxLonger, longer);
      srcWords += corpus_[i].src.size();
    }
    if(!current.empty())
      batches_.push_back(std::move(current));
    if(opt_.shuffleBatches && opt_.withinMaxiBatch)
      std::shuffle(batches_.begin() + std::ptrdiff_t(chunkFirst), batches_.end(), rng);
  }
  if(opt_.shuffleBatches && !opt_.withinMaxiBatch)
    std::shuffle(batches_.begin(), batches_.end(), rng);
  position_ = 0;
}

size_t BatchGenerator::fitSentences(size_t longest) const {
  size_t bucket = (std::max<size_t>(longest, 1) + opt_.fitStep - 1) / opt_.fitStep - 1;
  return opt_.fitSentences[std::min(bucket, opt_.fitSentences.size() - 1)];
}

Batch BatchGenerator::next() {
  ABORT_IF(!hasNext(), "No batches left in this epoch");
  return Batch::fromPairs(corpus_, batches_[position_++]);
}

void BatchGenerator::skip(size_t n) { position_ = std::min(batches_.size(), position_ + n); }

}  // namespace marian
