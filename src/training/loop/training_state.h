#pragma once
// defines: marian::TrainingState — where training stands (epoch, updates, corpus position,
// validation history, seed); saved as model.npz.progress.yml so that a restarted run resumes
// exactly where it stopped.
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/scheduling_parameter.h"

namespace YAML {
class Node;
}

namespace marian {

struct ValidatorState {
  double lastBest = 0;
  bool hasBest = false;
  size_t stalled = 0;
};

// Where each rank stands in an epoch of a streamed corpus (StreamedBatches): the epoch's chunks
// (of `chunkLines` lines each) from position `from` dealt over `ranks` ranks in windows of
// `windowChunks`, and each rank's windows done and batches taken of the next. ranks 0: not
// streamed, or the epoch not begun.
struct StreamState {
  uint64_t from = 0, ranks = 0, windowChunks = 0, chunkLines = 0;
  std::vector<uint64_t> windows, batches;  // per rank
};

struct TrainingState {
  size_t epochs = 1;         // the current epoch, 1-based
  uint64_t batches = 0;      // updates done
  size_t batchesEpoch = 0;   // updates done in the current epoch
  uint64_t corpusBatchesEpoch = 0;  // batches of the corpus consumed in the epoch, by all ranks
                                    // (the position a resume skips to, whatever the rank count)
  // The sentences of those batches (a corpus in memory), and how the epoch was cut into batches
  // (EpochData::epochCut: the batching options and --max-length): a resume that cuts otherwise
  // goes on after as many sentences, not batches.
  uint64_t corpusSentencesEpoch = 0;
  std::string batching;
  StreamState stream;
  // What the position and the model refer to: the corpus's and the vocabularies' content
  // (CorpusChunks::identity, ContentHash of each vocabulary file), as TrainingData names them.
  std::string corpus, vocabularies;
  // Sentences seen in the current epoch and target labels seen: every rank's where the ranks update
  // in lockstep (Marian's synchronous training counts them so), otherwise this rank's.
  uint64_t samplesEpoch = 0;
  uint64_t labelsTotal = 0;
  // Ranks with local steps agree on those once a round (LockstepAgreement): a checkpoint saved
  // mid-round holds the job's sentences and labels since, agreed after the resume as they would
  // have been without it.
  uint64_t samplesUnagreed = 0, labelsUnagreed = 0;
  // They agreed that the epoch is over (a streamed one ran out on some rank, or its last update
  // in memory): a run resumed here starts the next epoch.
  bool epochOver = false;
  uint64_t seed = 0;         // the effective --seed (drawn when 0)
  // what was back-propagated: kSummedGradient (the cross-entropy's sum, as Marian) or
  // kPerLabelGradient (--normalize-gradient: divided by every rank's labels of the update, as
  // Marian)
  static constexpr const char* kSummedGradient = "summed";
  static constexpr const char* kPerLabelGradient = "per-label-of-all-ranks";
  std::string gradient = kSummedGradient;
  uint64_t lastValidated = 0;
  std::map<std::string, ValidatorState> validators;
  // Marian's state-based learning-rate decay (--lr-decay, training/loop/learning_rate.h): the
  // factor so far; where --lr-warmup began again (in its unit), and where it began for the rate
  // of the next update (Marian sets the rate before it starts a warm-up again: the restart moves
  // the rate from the event after); the most validations in a row that stalled (as
  // EarlyStopping::stalled counts them).
  float lrFactor = 1;
  SchedulingParameter warmupStart, rateWarmupStart;
  size_t maxStalled = 0;
  // Marian's gNorm: a moving average of the updates' gradient norms per label
  float gradientNormAvg = 0;
  static constexpr size_t kGradientNormWindow = 100;  // Marian's --gradient-norm-average-window

  // The update just counted had this gradient norm per label (0: none computed, or the update
  // skipped): as Marian's scheduler, an exponential average over the last 100 updates (fewer at
  // the start), which 0 leaves as it is.
  void noteGradientNorm(float norm) {
    if(!(norm > 0.f) || !std::isfinite(norm))
      return;
    float alpha = 2.f / float(std::min<uint64_t>(kGradientNormWindow, batches) + 1);
    gradientNormAvg += alpha * (norm - gradientNormAvg);
  }

  // validations in a row without a new best of `metric` (0 before its first)
  size_t stalled(const std::string& metric) const {
    auto it = validators.find(metric);
    return it == validators.end() ? 0 : it->second.stalled;
  }

  // One update done: of corpusBatches batches (every rank's), sentences and target labels (as
  // samplesEpoch and labelsTotal count them).
  void countUpdate(uint64_t corpusBatches, uint64_t sentences, uint64_t labels) {
    ++batches;
    ++batchesEpoch;
    corpusBatchesEpoch += corpusBatches;
    countAgreed(sentences, labels);
  }
  // What the ranks agreed they trained since they last met (local steps, once a round).
  void countAgreed(uint64_t sentences, uint64_t labels) {
    samplesEpoch += sentences;
    labelsTotal += labels;
  }
  // The position in the epoch back to its start (--no-restore-corpus).
  void restartEpoch() {
    batchesEpoch = 0;
    corpusBatchesEpoch = 0;
    corpusSentencesEpoch = 0;
    stream = StreamState();
    samplesEpoch = 0;
    samplesUnagreed = 0;
    epochOver = false;
  }
  void newEpoch() {
    ++epochs;
    restartEpoch();
  }

  std::string toYaml() const;
  static TrainingState fromYaml(const std::string& path);  // errors name the file
  // The same from YAML text; errors name `path` as the progress file.
  static TrainingState parse(const std::string& yaml, const std::string& path);
  // The same from a YAML map; `origin` ("Checkpoint 'model.npz.optimizer.npz', ...") starts
  // every error, which names the key, its line and what it must be.
  static TrainingState fromNode(const YAML::Node& node, const std::string& origin);
};

}  // namespace marian
