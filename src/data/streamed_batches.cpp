#include "data/streamed_batches.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "common/error.h"
#include "common/logging.h"
#include "common/splitmix.h"
#include "common/timeline.h"
#include "data/corpus_chunks.h"

namespace marian {

namespace {

uint64_t mix(std::initializer_list<uint64_t> values) {
  uint64_t h = 0x6a09e667f3bcc909ull;
  for(uint64_t v : values)
    h = splitmix(h ^ v);
  return h;
}

}  // namespace

StreamedBatches::StreamedBatches(const CorpusChunks& chunks, PairEncoder encoder, const BatchingOptions& batching,
                                 size_t windowChunks, size_t threads, int rank, int ranks)
    : chunks_(chunks), encoder_(std::move(encoder)), batching_(batching), windowChunks_(std::max<size_t>(1, windowChunks)),
      threads_(std::max<size_t>(1, threads)), rank_(rank), ranks_(ranks) {
  ABORT_IF(ranks < 1 || rank < 0 || rank >= ranks, "StreamedBatches: rank {} of {}", rank, ranks);
}

StreamedBatches::~StreamedBatches() { stopProducer(); }

void StreamedBatches::hold(long long bytes) {
  size_t now = size_t((long long)(heldBytes_ += size_t(bytes)));
  size_t peak = peakBytes_.load();
  while(now > peak && !peakBytes_.compare_exchange_weak(peak, now)) {
  }
}

std::vector<size_t> StreamedBatches::chunkOrder(size_t epoch) const {
  std::vector<size_t> order(chunks_.chunks());
  std::iota(order.begin(), order.end(), 0);
  if(batching_.shuffleData) {
    std::mt19937_64 rng(mix({batching_.seed, epoch, 0x63686b}));  // "chk": apart from the windows' streams
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

std::vector<size_t> StreamedBatches::rankChunks(size_t epoch, uint64_t from) const {
  std::vector<size_t> order = chunkOrder(epoch), mine;
  for(uint64_t p = from + uint64_t(rank_); p < order.size(); p += uint64_t(ranks_))
    mine.push_back(order[p]);
  return mine;
}

void StreamedBatches::stopProducer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancel_ = true;
  }
  workers_.cancel();  // a window in preparation is abandoned at its next chunk
  changed_.notify_all();
  if(producer_.joinable())
    producer_.join();
  ready_.clear();
  failure_ = nullptr;
  cancel_ = false;
  workers_.resume();
}

void StreamedBatches::startEpoch(size_t epoch, uint64_t from, uint64_t window, uint64_t batch) {
  stopProducer();
  current_.reset();
  window_ = window;
  batch_ = 0;
  skipBatches_ = batch;
  skippedLong_ = skippedEmpty_ = 0;
  ended_ = false;
  producer_ = std::thread([this, epoch, from, window] { produce(epoch, from, window); });
}

void StreamedBatches::produce(size_t epoch, uint64_t from, uint64_t firstWindow) {
  timeline::nameThisThread("data (rank's windows)");
  workers_.join();  // its priority follows training's need of the window (WindowWorkers)
  struct Leave {
    WindowWorkers& w;
    ~Leave() { w.leave(); }
  } leave{workers_};
  try {
    std::vector<size_t> mine = rankChunks(epoch, from);
    size_t windows = (mine.size() + windowChunks_ - 1) / windowChunks_;
    for(uint64_t w = firstWindow; w < windows; ++w) {
      {  // at most one window waits beside the one training: memory stays at two windows
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return cancel_ || ready_.empty(); });
        if(cancel_)
          return;
      }
      auto win = std::make_unique<Window>();
      auto started = std::chrono::steady_clock::now();
      {
        timeline::Span span("prepare window", "data");
        win->index = w;
        std::vector<size_t> ids(mine.begin() + w * windowChunks_,
                                mine.begin() + std::min(mine.size(), size_t(w + 1) * windowChunks_));
        win->pairs = std::make_unique<Corpus>(chunks_, ids, encoder_, threads_, workers_.control());
        win->owner = this;
        hold((long long)win->pairs->bytes());
        if(win->pairs->size() > 0) {
          BatchingOptions opt = batching_;
          opt.seed = mix({batching_.seed, epoch, from, uint64_t(ranks_), uint64_t(rank_), w});
          BatchGenerator generator(*win->pairs, opt);
          generator.startEpoch(1);
          win->batches = generator.epochBatches();
        }
      }
      LOG(info, "[data] Rank {} epoch {}: window {} of {} ready, {} pairs in {} mini-batches ({} s)", rank_, epoch, w + 1,
          windows, win->pairs->size(), win->batches.size(),
          formatNumber("%.1f", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(win));
      changed_.notify_all();
    }
  } catch(const EncodingCancelled&) {
    return;  // stopProducer abandoned the window
  } catch(...) {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ready_.push_back(nullptr);
  changed_.notify_all();
}

std::optional<Batch> StreamedBatches::next() {
  for(;;) {
    if(ended_)
      return std::nullopt;
    if(current_ && batch_ < current_->batches.size())
      break;
    if(current_) {  // the window is done: the position moves past it
      window_ = current_->index + 1;
      batch_ = 0;
      current_.reset();
    }
    std::unique_ptr<Window> win;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if(ready_.empty() && !failure_) {
        timeline::Span span("wait for data", "data");
        workers_.setUrgent(true);  // training waits: the window at the normal priority
        changed_.wait(lock, [&] { return !ready_.empty() || failure_; });
        workers_.setUrgent(false);
      }
      if(failure_)
        std::rethrow_exception(failure_);
      win = std::move(ready_.front());
      ready_.pop_front();
    }
    changed_.notify_all();
    if(!win) {
      ended_ = true;
      continue;
    }
    skippedLong_ += win->pairs->skippedLong();
    skippedEmpty_ += win->pairs->skippedEmpty();
    window_ = win->index;
    batch_ = 0;
    if(skipBatches_) {  // resuming inside this window
      batch_ = std::min<uint64_t>(skipBatches_, win->batches.size());
      skipBatches_ = 0;
    }
    current_ = std::move(win);
  }
  return Batch::fromPairs(*current_->pairs, current_->batches[size_t(batch_++)]);
}

}  // namespace marian
