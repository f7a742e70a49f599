#pragma once
// defines: marian::EpochData — this rank's mini-batches of each epoch, the position a checkpoint
// records and the one a resume starts from.
//
// A corpus that fits the shuffle window (--shuffle-window pairs), or any with --shuffle-in-ram,
// is held in memory: each epoch is shuffled whole and its batches go to the ranks in turn (batch
// k to rank k mod R), so the epoch is the same on any rank count and a resume on another one
// continues it exactly; one that cuts the epoch into batches otherwise (--mini-batch changed,
// say) goes on after as many sentences as were trained. A larger corpus is streamed
// (StreamedBatches): chunks go to the ranks in turn, each rank reads and encodes only its own,
// memory is bounded by the window. A resume on
// the same rank count continues exactly; on another, the epoch goes on from the first chunk no
// rank had started (the rest of the windows then in training is not trained again this epoch).
#include <memory>
#include <string>
#include <vector>

#include "data/batch_generator.h"
#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/streamed_batches.h"
#include "training/loop/training_state.h"

namespace marian {

class Transport;

struct EpochDataOptions {
  BatchingOptions batching;
  size_t windowPairs = 100000;  // --shuffle-window: pairs in memory at once, over all ranks
  size_t threads = 1;           // --data-threads
  size_t delay = 1;             // mini-batches per update
  bool lockstep = false;        // ranks make the same updates (sync-SGD): an epoch ends on all at once
};

class EpochData {
public:
  // inMemory: the whole corpus encoded (then `chunks` may be null); otherwise streamed from `chunks`.
  EpochData(std::shared_ptr<const Corpus> inMemory, const CorpusChunks* chunks, PairEncoder encoder,
            const EpochDataOptions& options, int rank, int ranks, Transport* transport);

  bool streamed() const { return corpus_ == nullptr; }
  // Starts epoch `state.epochs` where `state` says this rank stands in it. A position saved by a
  // run that read the corpus otherwise (cut into other batches, other chunks, in memory against
  // streamed) is mapped to this run's, or the epoch starts again, and `state` then holds this
  // run's position, so that the next save records it in this run's terms.
  void startEpoch(TrainingState& state);
  // This rank's next `delay` batches; empty when the epoch has ended. In lockstep the ranks'
  // streamed parts of an epoch differ by up to a chunk, so a group may be short on one rank
  // alone: the epoch then ends on all (the trainer learns it when the ranks next agree on what
  // they trained, LockstepAgreement, with no collective of its own) and each calls endEpochWithout.
  std::vector<Batch> nextGroup();
  // In memory and in lockstep: whether the epoch ends after the update just taken (the next group
  // would be short), the same on every rank.
  bool endsAfterThisUpdate() const;
  // Ends the epoch without training `group` or what is left of it on this rank.
  void endEpochWithout(const std::vector<Batch>& group);
  // Where every rank stands: state.corpusSentencesEpoch for a corpus in memory, state.stream
  // for a streamed one (collective in lockstep; otherwise this rank's position stands for every
  // rank's); and how this run cuts the epoch, state.batching.
  void recordPosition(TrainingState& state) const;
  // What the epoch left untrained on this rank to keep ranks in lockstep, and skipped pairs.
  size_t droppedBatches() const { return dropped_; }
  size_t skippedLong() const;
  size_t skippedEmpty() const;
  // The most bytes of encoded corpus this rank held at once (the whole corpus in memory).
  size_t peakBytes() const;
  // The log's lines: what a streamed epoch skipped or left untrained on this rank, and at the
  // end of training the most encoded corpus held at once.
  void logEpochEnd(size_t epoch) const;
  void logPeakBytes() const;

  // The chunks per rank window on `ranks` ranks.
  static size_t windowChunks(size_t windowPairs, size_t chunkLines, int ranks);
  // Lines per chunk for a shuffle window: small enough that a window mixes many places.
  static size_t chunkLines(size_t windowPairs);
  // How an epoch is cut into batches, as a checkpoint records it (state.batching): the batching
  // options and those that decide which pairs the epoch holds (another --max-length keeps other
  // pairs, so a saved batch count is another place in the epoch).
  static std::string epochCut(const BatchingOptions& batching, const PairEncoder& encoder);

private:
  // In memory and in lockstep: the batch position where the epoch's last whole round of updates
  // ends (the batches from there are left untrained).
  size_t lockstepLimit() const;
  // Whether `state` was saved by a run that cut the epoch into batches otherwise (epochCut), and how.
  bool cutOtherwise(const TrainingState& state) const;
  std::string batchingChange(const TrainingState& state) const;

  std::shared_ptr<const Corpus> corpus_;
  std::unique_ptr<BatchGenerator> generator_;
  // the batch this run's epoch started from (past a resumed checkpoint's): ranks in lockstep take
  // whole rounds counted from it
  size_t epochStart_ = 0;
  std::unique_ptr<StreamedBatches> stream_;
  EpochDataOptions opt_;
  std::string batching_;  // epochCut(opt_.batching, the encoder)
  int rank_, ranks_;
  Transport* transport_;
  size_t maxLength_;  // the encoder's --max-length, for the log
  size_t windowChunks_ = 1, chunkCount_ = 0, chunkLines_ = 0;
  uint64_t from_ = 0;  // of the current epoch's dealing
  size_t dropped_ = 0;
  bool ended_ = false;
};

}  // namespace marian
