#include "training/loop/epoch_data.h"

#include <algorithm>

#include "comm/transport.h"
#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"

namespace marian {

namespace {

// The options of `a` that `b` does not have, of two BatchingOptions::describe() texts.
std::string optionsNotIn(const std::string& a, const std::string& b) {
  auto split = [](const std::string& d) {
    std::vector<std::string> options;
    for(size_t at = 0; at < d.size();) {
      size_t next = d.find(" --", at + 1);
      options.push_back(d.substr(at, next == std::string::npos ? std::string::npos : next - at));
      at = next == std::string::npos ? d.size() : next + 1;
    }
    return options;
  };
  std::vector<std::string> inB = split(b);
  std::string out;
  for(const std::string& o : split(a))
    if(std::find(inB.begin(), inB.end(), o) == inB.end())
      out += (out.empty() ? "" : " ") + o;
  return out;
}

}  // namespace

size_t EpochData::chunkLines(size_t windowPairs) { return std::clamp<size_t>(windowPairs / 200, 1, 1000); }

std::string EpochData::epochCut(const BatchingOptions& batching, const PairEncoder& encoder) {
  return batching.describe() + " " + encoder.describe();
}

size_t EpochData::windowChunks(size_t windowPairs, size_t chunkLines, int ranks) {
  return std::max<size_t>(1, windowPairs / size_t(std::max(ranks, 1)) / std::max<size_t>(chunkLines, 1));
}

EpochData::EpochData(std::shared_ptr<const Corpus> inMemory, const CorpusChunks* chunks, PairEncoder encoder,
                     const EpochDataOptions& options, int rank, int ranks, Transport* transport)
    : corpus_(std::move(inMemory)), opt_(options), batching_(epochCut(options.batching, encoder)), rank_(rank), ranks_(ranks),
      transport_(transport), maxLength_(encoder.maxLength) {
  ABORT_IF(!opt_.delay, "EpochData: an update needs at least one mini-batch");
  if(corpus_) {
    generator_ = std::make_unique<BatchGenerator>(*corpus_, opt_.batching);
    return;
  }
  ABORT_IF(!chunks, "EpochData: no corpus");
  chunkCount_ = chunks->chunks();
  chunkLines_ = chunks->chunkLines();
  windowChunks_ = windowChunks(opt_.windowPairs, chunks->chunkLines(), ranks);
  stream_ = std::make_unique<StreamedBatches>(*chunks, std::move(encoder), opt_.batching, windowChunks_, opt_.threads,
                                              rank, ranks);
}

void EpochData::startEpoch(TrainingState& state) {
  dropped_ = 0;
  ended_ = false;
  if(generator_) {
    generator_->startEpoch(state.epochs);
    // past every batch any rank of the saved run took (on R ranks each update of a rank stands
    // for one batch of every rank)
    size_t skip = size_t(state.corpusBatchesEpoch);
    if(skip && state.stream.ranks) {  // counted in a streamed epoch's batches, which are other sentences
      if(rank_ == 0)
        LOG(warn, "[data] The checkpoint's position in epoch {} was saved with the corpus streamed; in memory, the "
                  "epoch starts again from its beginning",
            state.epochs);
      state.restartEpoch();  // as --no-restore-corpus: nothing of the epoch counted as trained
      skip = 0;
    } else if(skip && cutOtherwise(state)) {  // batch k is another place now: past as many sentences
      const std::vector<std::vector<size_t>>& batches = generator_->epochBatches();
      uint64_t sentences = 0;
      for(skip = 0; skip < batches.size() && sentences < state.corpusSentencesEpoch; ++skip)
        sentences += batches[skip].size();
      if(rank_ == 0)
        LOG(warn, "[data] {}: it goes on after {} sentences ({} of its {} batches), as many as were trained, not "
                  "after the saved {} batches",
            batchingChange(state), sentences, skip, batches.size(), state.corpusBatchesEpoch);
    }
    generator_->skip(skip);
    epochStart_ = skip;
    state.corpusBatchesEpoch = skip;  // in this run's batches from here on
    state.batching = batching_;
    state.stream = StreamState();
    return;
  }
  const StreamState s = state.stream;
  uint64_t window = 0, batch = 0;
  from_ = 0;
  std::string startsAgain;  // how the saved run read the corpus, where this run cannot go on from it
  if(s.ranks && s.chunkLines != chunkLines_)  // other chunks, dealt in another order
    startsAgain = format("read in chunks of {} lines (this run's: {}; another --shuffle-window)", s.chunkLines, chunkLines_);
  else if(!s.ranks && state.corpusBatchesEpoch)
    startsAgain = "held in memory";
  if(!startsAgain.empty()) {
    if(rank_ == 0)
      LOG(warn, "[data] The checkpoint's position in epoch {} was saved with the corpus {}: the epoch starts again from "
                "its beginning",
          state.epochs, startsAgain);
    state.restartEpoch();  // as --no-restore-corpus: nothing of the epoch counted as trained
  } else if(s.ranks) {
    if(cutOtherwise(state) && rank_ == 0)
      LOG(warn, "[data] {}: the windows in training go on after as many batches as were taken of them, which are "
                "other sentences now",
          batchingChange(state));
    if(s.ranks == uint64_t(ranks_) && s.windowChunks == windowChunks_) {
      from_ = s.from;
      window = s.windows[size_t(rank_)];
      batch = s.batches[size_t(rank_)];
    } else {
      // the first chunk position after every chunk the saved ranks had started
      for(uint64_t r = 0; r < s.ranks; ++r) {
        uint64_t started = (s.windows[r] + 1) * s.windowChunks;  // entries of rank r's list
        from_ = std::max(from_, std::min<uint64_t>(chunkCount_, s.from + (started - 1) * s.ranks + r + 1));
      }
      if(rank_ == 0)
        LOG(info, "[data] The checkpoint was saved on {} rank(s) with windows of {} chunks, this run has {} with {}: "
                  "epoch {} goes on from chunk {} of {}, after every chunk a saved rank had started (their windows in "
                  "training are not trained again this epoch)",
            s.ranks, s.windowChunks, ranks_, windowChunks_, state.epochs, from_, chunkCount_);
    }
  }
  stream_->startEpoch(state.epochs, from_, window, batch);
}

std::vector<Batch> EpochData::nextGroup() {
  std::vector<Batch> group;
  if(ended_)
    return group;
  if(generator_) {
    BatchGenerator& batches = *generator_;
    while(group.size() < opt_.delay && batches.hasNext()) {
      if(ranks_ > 1 && batches.position() % size_t(ranks_) != size_t(rank_)) {
        batches.skip(1);  // another rank's batch: every rank trains on its own part of the epoch
        continue;
      }
      // the last incomplete round: every rank must make the same updates
      if(opt_.lockstep && ranks_ > 1 && batches.position() >= lockstepLimit()) {
        batches.skip(1);
        continue;
      }
      group.push_back(batches.next());
    }
    ended_ = group.empty();
    return group;
  }
  while(group.size() < opt_.delay) {
    std::optional<Batch> b = stream_->next();
    if(!b)
      break;
    group.push_back(std::move(*b));
  }
  ended_ = group.empty();
  return group;
}

size_t EpochData::lockstepLimit() const {
  // whole rounds of every rank's update, counted from where this run's epoch began (a checkpoint
  // of other ranks may have left it past any multiple of a round)
  size_t round = opt_.delay * size_t(ranks_), start = std::min(epochStart_, generator_->batchesInEpoch());
  return start + (generator_->batchesInEpoch() - start) / round * round;
}

bool EpochData::endsAfterThisUpdate() const {
  ABORT_IF(!generator_ || !opt_.lockstep, "EpochData: an epoch's end is known ahead only in memory and in lockstep");
  size_t R = size_t(ranks_), at = generator_->position();
  size_t next = at + (size_t(rank_) + R - at % R) % R;  // this rank's next batch
  return next + (opt_.delay - 1) * R >= lockstepLimit();
}

void EpochData::endEpochWithout(const std::vector<Batch>& group) {
  dropped_ += group.size();
  if(stream_)
    while(stream_->next())
      ++dropped_;
  ended_ = true;
}

bool EpochData::cutOtherwise(const TrainingState& state) const {
  return state.batching != batching_;
}

std::string EpochData::batchingChange(const TrainingState& state) const {
  return format("Epoch {} was cut into batches with '{}' when saved, '{}' now", state.epochs,
                optionsNotIn(state.batching, batching_), optionsNotIn(batching_, state.batching));
}

void EpochData::recordPosition(TrainingState& state) const {
  state.batching = batching_;
  if(generator_) {
    const std::vector<std::vector<size_t>>& batches = generator_->epochBatches();
    state.corpusSentencesEpoch = 0;
    for(size_t k = 0; k < std::min<uint64_t>(state.corpusBatchesEpoch, batches.size()); ++k)
      state.corpusSentencesEpoch += batches[k].size();
    return;
  }
  StreamState& s = state.stream;
  s.from = from_;
  s.ranks = uint64_t(ranks_);
  s.windowChunks = windowChunks_;
  s.chunkLines = chunkLines_;
  s.windows.assign(size_t(ranks_), stream_->window());
  s.batches.assign(size_t(ranks_), stream_->batch());
  if(opt_.lockstep && ranks_ > 1) {  // every rank's own, through one small collective
    ABORT_IF(stream_->window() >= kExactInFloat || stream_->batch() >= kExactInFloat,
             "Stream position window {} batch {} is too large to record", stream_->window(), stream_->batch());
    std::vector<float> all(2 * size_t(ranks_), 0.f);
    all[2 * size_t(rank_)] = float(stream_->window());
    all[2 * size_t(rank_) + 1] = float(stream_->batch());
    transport_->allreduceSum(all.data(), all.size(), transport_->peerTimeout(), "the ranks' corpus positions");
    for(size_t r = 0; r < size_t(ranks_); ++r) {
      s.windows[r] = uint64_t(all[2 * r]);
      s.batches[r] = uint64_t(all[2 * r + 1]);
    }
  }
}

size_t EpochData::skippedLong() const { return stream_ ? stream_->skippedLong() : corpus_->skippedLong(); }
size_t EpochData::skippedEmpty() const { return stream_ ? stream_->skippedEmpty() : corpus_->skippedEmpty(); }
size_t EpochData::peakBytes() const { return stream_ ? stream_->peakBytes() : corpus_->bytes(); }

void EpochData::logEpochEnd(size_t epoch) const {
  if(!streamed())
    return;
  LOG(info, "[data] Epoch {} on this rank: {} pairs longer than --max-length {} skipped, {} empty skipped{}", epoch,
      skippedLong(), maxLength_, skippedEmpty(),
      dropped_ ? format(", its last {} mini-batch(es) not trained (a rank had no whole update left)", dropped_)
               : std::string());
}

void EpochData::logPeakBytes() const {
  LOG(info, "[data] This rank held at most {} MB of encoded corpus at once ({})",
      formatNumber("%.1f", double(peakBytes()) / 1e6),
      streamed() ? "windows of --shuffle-window " + grouped(opt_.windowPairs) + " pairs over " + std::to_string(ranks_) +
                       " rank(s)"
                 : std::string("the whole corpus in memory"));
}

}  // namespace marian
