#pragma once
// defines: marian::StreamedBatches — one rank's mini-batches of each epoch from a corpus left on
// disk (CorpusChunks), with memory bounded by two windows whatever the corpus size.
//
// An epoch puts the corpus' chunks in an order drawn from (seed, epoch) (file order with
// --shuffle batches|none). From position `from` of that order, rank r of R takes the chunks
// r, r+R, r+2R, ...: the ranks read and encode disjoint parts that together cover the epoch.
// A rank's chunks go in windows of windowChunks; each window is encoded, then formed into
// mini-batches as BatchGenerator forms an epoch (pairs shuffled, maxi-batches sorted by length,
// mini-batches shuffled), within the window. A background thread prepares the next window while
// the current one trains. (window, batch) says where a rank stands without encoding what came
// before, so a resume starts at its window.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "data/batch_generator.h"
#include "data/corpus.h"
#include "data/window_workers.h"

namespace marian {

class CorpusChunks;

class StreamedBatches {
public:
  StreamedBatches(const CorpusChunks& chunks, PairEncoder encoder, const BatchingOptions& batching,
                  size_t windowChunks, size_t threads, int rank, int ranks);
  ~StreamedBatches();

  // Epoch `epoch` (1-based): the chunks from position `from` of its order, dealt over this
  // object's ranks; starts at this rank's window `window`, past its first `batch` batches.
  void startEpoch(size_t epoch, uint64_t from = 0, uint64_t window = 0, uint64_t batch = 0);
  // This rank's next batch of the epoch; none when the epoch has ended for this rank. An error
  // found while preparing (a line that is not UTF-8) is thrown here.
  std::optional<Batch> next();
  uint64_t window() const { return window_; }  // this rank's windows done
  uint64_t batch() const { return batch_; }    // batches taken of the window after them
  size_t skippedLong() const { return skippedLong_; }    // pairs skipped in this rank's windows so far
  size_t skippedEmpty() const { return skippedEmpty_; }  // in this epoch
  // The most bytes of encoded windows held at once since the start (the one training, the one
  // ready and the one in preparation).
  size_t peakBytes() const { return peakBytes_.load(); }

private:
  std::vector<size_t> chunkOrder(size_t epoch) const;  // the epoch's order of all chunks
  // This rank's chunks of the epoch from `from`, in order.
  std::vector<size_t> rankChunks(size_t epoch, uint64_t from) const;

  struct Window {
    uint64_t index = 0;
    std::unique_ptr<Corpus> pairs;
    std::vector<std::vector<size_t>> batches;
    StreamedBatches* owner = nullptr;  // counts the window's bytes while it lives
    ~Window() {
      if(owner && pairs)
        owner->hold(-(long long)pairs->bytes());
    }
  };
  void stopProducer();
  void produce(size_t epoch, uint64_t from, uint64_t firstWindow);

  const CorpusChunks& chunks_;
  PairEncoder encoder_;
  BatchingOptions batching_;
  size_t windowChunks_, threads_;
  int rank_, ranks_;

  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Window>> ready_;  // null: the epoch's end
  std::exception_ptr failure_;
  bool cancel_ = false;
  WindowWorkers workers_;  // the producer's and its encoders' priority; abandons a window
  std::atomic<size_t> heldBytes_{0}, peakBytes_{0};
  void hold(long long bytes);

  std::unique_ptr<Window> current_;
  uint64_t window_ = 0, batch_ = 0, skipBatches_ = 0;
  size_t skippedLong_ = 0, skippedEmpty_ = 0;
  bool ended_ = false;
};

}  // namespace marian
