#include "training/loop/training_data.h"

#include <chrono>
#include <cstdio>
#include <tuple>

#include "common/content_hash.h"
#include "common/error.h"
#include "common/file_util.h"
#include "common/format.h"
#include "common/logging.h"
#include "training/loop/batch_fit.h"

namespace marian {

TrainingData TrainingData::load(const Options& o) {
  TrainingData data;
  auto trainSets = o.get<std::vector<std::string>>("train-sets");
  auto vocabPaths = o.get<std::vector<std::string>>("vocabs", {});
  ABORT_IF(vocabPaths.size() != 2, "--vocabs needs a source and a target vocabulary, got {}", vocabPaths.size());
  auto dims = o.get<std::vector<int>>("dim-vocabs");
  dims.resize(2, 0);
  for(int d : dims)
    ABORT_IF(d != 0 && d < 3, "--dim-vocabs {}: a vocabulary needs </s>, <unk> and at least one word (0: all words)", d);
  bool joint = vocabPaths[0] == vocabPaths[1];
  bool tsv = o.get<bool>("tsv");
  // --data-weighting's weights and --guided-alignment's alignments: files beside the corpus, or
  // with --tsv the indices of their fields (as Marian: distinct, among the line's fields)
  std::string weighting = o.get<std::string>("data-weighting");
  std::string alignment = o.get<std::string>("guided-alignment");
  bool aligned = alignment != "none";
  ABORT_IF(alignment.empty(), "--guided-alignment '': give a file of alignments{}, or none", tsv ? " (with --tsv, a field's index)" : "");
  LineExtras extras;
  extras.sentenceWeights = o.get<std::string>("data-weighting-type") != "word";
  int fields = 2 + int(!weighting.empty()) + int(aligned);
  for(auto [given, option, extra] : {std::tuple{weighting, "data-weighting", &extras.weights},
                                     std::tuple{aligned ? alignment : std::string(), "guided-alignment", &extras.alignment}}) {
    if(given.empty())
      continue;
    if(!tsv) {
      extra->file = given;
      continue;
    }
    ABORT_IF(given.find_first_not_of("0123456789") != std::string::npos || given.size() > 1 ||
                 std::stoi(given) >= fields,
             "--{} '{}' with --tsv: the index (0-based) of the TSV field that holds them, 0 to {}", option, given,
             fields - 1);
    extra->tsvField = std::stoi(given);
  }
  // (before a vocabulary is trained from the fields left)
  ABORT_IF(extras.weights.tsvField >= 0 && extras.weights.tsvField == extras.alignment.tsvField,
           "--data-weighting and --guided-alignment name the same TSV field {}", extras.weights.tsvField);
  int tsvFields = o.get<int>("tsv-fields");
  ABORT_IF(tsv && tsvFields != 0 && tsvFields != fields,
           "--tsv-fields {}: a parallel corpus has {} fields per line (a source and a target{}{})", tsvFields, fields,
           weighting.empty() ? "" : ", the weights", aligned ? ", the alignments" : "");
  // the TSV fields of the source and the target: those the extras leave
  std::vector<size_t> textFields;
  for(int f = 0; f < fields; ++f)
    if(f != extras.weights.tsvField && f != extras.alignment.tsvField)
      textFields.push_back(size_t(f));
  // Vocabularies this run creates go again if the corpus turns out unusable: a later run on good
  // data must not silently load them.
  std::vector<std::string> created;
  try {
    for(size_t i = 0; i < 2; ++i) {
      if(joint && i == 1) {
        data.vocabs.push_back(data.vocabs[0]);
        continue;
      }
      // a missing vocabulary learns from its side of the corpus, a joint one from both
      std::vector<std::string> from = joint || tsv ? trainSets : std::vector<std::string>{trainSets.at(i)};
      if(!fileExists(vocabPaths[i]))
        created.push_back(vocabPaths[i]);
      VocabTraining training{size_t(o.get<int>("sentencepiece-max-lines")), o.get<std::string>("sentencepiece-options"),
                             o.get<std::string>("tempdir"), {}};
      if(tsv)
        training.tsvFields = joint ? textFields : std::vector<size_t>{textFields[i]};
      data.vocabs.push_back(loadOrCreateVocab(vocabPaths[i], from, size_t(dims[i]), training));
    }
    size_t maxLength = size_t(o.get<int>("max-length"));
    DataWeighting weightType = weighting.empty()                                    ? DataWeighting::none
                               : o.get<std::string>("data-weighting-type") == "word" ? DataWeighting::word
                                                                                    : DataWeighting::sentence;
    data.encoder = PairEncoder{data.vocabs, maxLength, o.get<bool>("max-length-crop"), weightType,
                               o.get<bool>("right-left"),
                               tsv ? "TSV file '" + trainSets[0] + "' (field " + weighting + ")"
                                   : "Weights file '" + weighting + "'",
                               aligned,
                               tsv ? "TSV file '" + trainSets[0] + "' (field " + alignment + ")"
                                   : "Alignment file '" + alignment + "'"};
    size_t window = size_t(o.get<int>("shuffle-window"));
    auto passStart = std::chrono::steady_clock::now();
    data.chunks = std::make_shared<CorpusChunks>(trainSets, tsv, EpochData::chunkLines(window),
                                                 o.get<std::string>("tempdir"), extras);
    double passSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - passStart).count();
    data.corpusIdentity = data.chunks->identity();
    data.extrasIdentity = data.chunks->extrasIdentity();
    data.vocabIdentity = "source " + hashFile(vocabPaths[0]).str() + "; target " + hashFile(vocabPaths[1]).str();
    if(o.get<bool>("shuffle-in-ram") || data.chunks->lines() <= window) {
      std::vector<size_t> all(data.chunks->chunks());
      for(size_t c = 0; c < all.size(); ++c)
        all[c] = c;
      data.corpus = std::make_shared<Corpus>(*data.chunks, all, data.encoder, size_t(o.get<int>("data-threads")));
      data.chunks.reset();
      LOG(info, "[data] Training corpus: {} sentence pairs in memory ({} longer than --max-length {} skipped, {} empty "
                "skipped)",
          grouped(data.corpus->size()), data.corpus->skippedLong(), maxLength, data.corpus->skippedEmpty());
      ABORT_IF(data.corpus->size() == 0, "The training corpus has no usable sentence pairs");
    } else {
      std::vector<size_t> empty = data.chunks->emptyLines();
      LOG(info, "[data] Training corpus: {} sentence pairs ({} MB of text) streamed from disk in windows of {} "
                "pairs (--shuffle-window), chunks of {} line(s); every line checked in {} s, {} empty (their pairs skipped)",
          grouped(data.chunks->lines()), formatNumber("%.1f", double(data.chunks->bytes()) / 1e6), grouped(window),
          data.chunks->chunkLines(), formatNumber("%.1f", passSeconds),
          empty.size() >= 2 ? format("{} and {}", empty[0], empty[1]) : format("{}", empty[0]));
    }
  } catch(const std::exception&) {
    removeCreatedVocabs(created);
    throw;
  }
  data.createdVocabs = created;
  return data;
}

void removeCreatedVocabs(const std::vector<std::string>& created) {
  for(const std::string& path : created)
    if(std::remove(path.c_str()) == 0)
      LOG(info, "[data] Removed the vocabulary '{}' this failed run created", path);
}

Batch TrainingData::sampleBatch() const {
  if(corpus)
    return Batch::fromPairs(*corpus, {0});
  for(size_t c = 0; c < chunks->chunks(); ++c) {
    Corpus chunk(*chunks, {c}, encoder, 1);
    if(chunk.size())
      return Batch::fromPairs(chunk, {0});
  }
  ABORT("The training corpus has no usable sentence pairs (every pair is empty or longer than --max-length {})",
        encoder.maxLength);
}

EpochDataOptions epochDataOptions(const Options& o, const TrainingData& data, uint64_t seed, size_t delay,
                                  size_t devicesSharingABatch, bool lockstep) {
  EpochDataOptions d;
  BatchingOptions& b = d.batching;
  b.miniBatch = size_t(o.get<int>("mini-batch"));
  b.miniBatchWords = size_t(o.get<int>("mini-batch-words"));
  b.maxiBatch = size_t(o.get<int>("maxi-batch"));
  if(o.get<bool>("mini-batch-fit")) {
    b.fitStep = size_t(o.get<int>("mini-batch-fit-step"));
    b.fitSentences = fitBatchSentences(o, data.vocabs[0]->size(), data.vocabs[1]->size(), b.fitStep,
                                       devicesSharingABatch);
  }
  b.sortBy = o.get<std::string>("maxi-batch-sort");
  std::string shuffle = o.get<bool>("no-shuffle") ? "none" : o.get<std::string>("shuffle");
  b.shuffleData = shuffle == "data";
  b.shuffleBatches = shuffle != "none";
  b.withinMaxiBatch = o.get<bool>("shuffle-within-maxi-batch");
  b.seed = seed;
  d.windowPairs = size_t(o.get<int>("shuffle-window"));
  d.threads = size_t(o.get<int>("data-threads"));
  d.delay = delay;
  d.lockstep = lockstep;
  return d;
}

}  // namespace marian
