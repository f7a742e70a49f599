#pragma once
// defines: marian::TrainingData — what a run trains on, built once at its start from the options:
// the two vocabularies (loaded, or created from the corpus and removed again when the corpus
// turns out unusable), the pair encoder, and the corpus: encoded whole in memory when it fits
// --shuffle-window (or with --shuffle-in-ram), otherwise its chunks streamed from disk; and
// epochDataOptions, the batching options EpochData cuts it with.
#include <memory>
#include <vector>

#include "common/options.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/vocab.h"
#include "training/loop/epoch_data.h"

namespace marian {

struct TrainingData {
  std::vector<std::shared_ptr<Vocab>> vocabs;  // source, target (one shared when the paths are equal)
  PairEncoder encoder;
  // read-only once loaded: ranks that are threads of one process share them (--ranks-in-process)
  std::shared_ptr<const Corpus> corpus;        // in memory
  std::shared_ptr<const CorpusChunks> chunks;  // or streamed from disk
  // Vocabulary files this load created (they did not exist): a run that fails before its first
  // save removes them, so that a later run does not silently load what a bad start chose.
  std::vector<std::string> createdVocabs;
  // What a checkpoint records of them (ContentHash): a resume on another corpus or vocabulary is
  // named (ModelFolder::checkTrainedOn), and so is a rank whose copies differ from rank 0's
  // (checkRanksAgree).
  std::string corpusIdentity, vocabIdentity;
  // the files of --data-weighting and --guided-alignment (CorpusChunks::extrasIdentity), for the ranks
  std::string extrasIdentity;

  // Errors name the option or file at fault.
  static TrainingData load(const Options& options);
  // A batch of one training pair, from which the graph group learns the shapes.
  Batch sampleBatch() const;
};

// Removes each of these vocabulary files (what TrainingData::load created), saying so.
void removeCreatedVocabs(const std::vector<std::string>& created);

// --mini-batch, --maxi-batch, --shuffle, --mini-batch-fit (sentences per length for `devices`
// devices sharing a batch) and the window and thread counts, for a run of this seed and
// --optimizer-delay `delay`; lockstep: ranks that update together.
EpochDataOptions epochDataOptions(const Options& options, const TrainingData& data, uint64_t seed, size_t delay,
                                  size_t devicesSharingABatch, bool lockstep);

}  // namespace marian
