#include "translator/translator.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <queue>

#include "common/error.h"
#include "common/logging.h"
#include "common/parallel.h"
#include "data/batch_generator.h"
#include "data/corpus.h"

namespace marian {

std::string wordScoresText(const std::vector<float>& scores) {
  std::string text = "WordScores=";
  for(float score : scores)
    text += " " + formatNumber("%.5f", double(score));
  return text;
}

BeamOptions beamOptions(const Options& o) {
  BeamOptions b;
  b.beamSize = o.get<int>("beam-size");
  b.normalize = o.get<float>("normalize");
  b.wordPenalty = o.get<float>("word-penalty");
  b.maxLengthFactor = o.get<float>("max-length-factor");
  b.maxLengthPerSentence = o.get<bool>("max-length-factor-per-sentence");
  b.allowUnk = o.get<bool>("allow-unk");
  if(o.has("output-sampling"))  // the decoder's (validation translates with beam search)
    b.sampling = OutputSampling(o.get<std::vector<std::string>>("output-sampling"));
  b.alignment = o.has("alignment") && !o.get<std::string>("alignment").empty();  // the decoder's
  return b;
}

DecodingLimits decodingLimits(const Options& o) {
  std::string sort = o.get<std::string>("maxi-batch-sort");
  return {size_t(o.get<int>("max-length")), size_t(o.get<int>("workspace")), size_t(o.get<int>("maxi-batch")),
          sort == "src", size_t(o.get<int>("mini-batch-words"))};
}

Translator::Translator(const Options& modelOptions, std::vector<std::shared_ptr<Vocab>> vocabs,
                       const BeamOptions& beam, size_t miniBatch, const std::vector<Device>& devices,
                       const DecodingLimits& limits)
    : Translator(std::vector<Options>{modelOptions}, {1.f}, std::move(vocabs), beam, miniBatch, devices, limits) {}

Translator::Translator(const std::vector<Options>& architectures, const std::vector<float>& weights,
                       std::vector<std::shared_ptr<Vocab>> vocabs, const BeamOptions& beam, size_t miniBatch,
                       const std::vector<Device>& devices, const DecodingLimits& limits)
    : rightLeft_(architectures.at(0).get<bool>("right-left")), vocabs_(std::move(vocabs)), beam_(beam),
      miniBatch_(std::max<size_t>(1, miniBatch)), limits_(limits) {
  ABORT_IF(weights.size() != architectures.size(), "--weights gives {} weight(s) for {} model(s): one a model",
           weights.size(), architectures.size());
  for(const Options& architecture : architectures) {
    // as Marian: the models of an ensemble read their inputs alike
    ABORT_IF(architecture.get<bool>("right-left") != rightLeft_,
             "Left-to-right and right-to-left models cannot be used together in an ensemble (Marian's rule)");
    models_.push_back(std::make_unique<DeviceModels>(architecture, vocabs_, devices, limits.workspaceMB));
  }
  beam_.eosId = vocabs_[1]->eosId();
  beam_.unkId = vocabs_[1]->unkId();
  if(beam_.sampling.on()) {
    LOG(info, "[translate] Output sampling {}", beam_.sampling.describe());
    if(beam.beamSize > 1)
      LOG(warn, "[translate] Output sampling with beam {} is stochastic beam search (a sample needs --beam-size 1), "
                "as Marian warns", beam.beamSize);
  }
  for(size_t d = 0; d < devices.size(); ++d) {
    std::vector<ScoringModel> ensemble;
    for(size_t m = 0; m < models_.size(); ++m)
      ensemble.push_back({&models_[m]->model(d), &models_[m]->graph(d), weights[m]});
    searches_.push_back(std::make_unique<BeamSearch>(std::move(ensemble), beam_));
  }
}

void Translator::load(const std::vector<std::string>& modelPaths) {
  ABORT_IF(modelPaths.size() != models_.size(), "{} model file(s) for an ensemble of {}", modelPaths.size(),
           models_.size());
  for(size_t m = 0; m < models_.size(); ++m)
    models_[m]->load(modelPaths[m]);
}

void Translator::setValues(const std::vector<float>& values) {
  ABORT_IF(models_.size() != 1, "Flat parameter values for an ensemble of {} models", models_.size());
  models_[0]->setValues(values);
}

size_t Translator::parameterCount() const {
  size_t n = 0;
  for(const auto& m : models_)
    n += m->parameterCount();
  return n;
}

Translator::~Translator() = default;

std::vector<std::vector<Hypothesis>> Translator::translate(const std::vector<std::string>& lines) {
  std::vector<std::vector<int>> sources;
  size_t cropped = 0;
  for(const std::string& line : lines) {
    sources.push_back(vocabs_[0]->encode(line, true));
    std::vector<int>& ids = sources.back();
    if(limits_.maxLength && cropWords(ids, limits_.maxLength, vocabs_[0]->eosId()))
      ++cropped;
    if(rightLeft_)
      reverseWords(ids);
  }
  if(cropped)
    LOG(warn, "[translate] {} input(s) longer than --max-length {} cropped to it", cropped, limits_.maxLength);
  std::vector<size_t> lengths;
  for(const std::vector<int>& ids : sources)
    lengths.push_back(ids.size());
  std::vector<std::vector<size_t>> batchLines = decodingBatches(lengths, miniBatch_, limits_);
  size_t batches = batchLines.size();
  std::vector<std::vector<Hypothesis>> out(lines.size());
  uint64_t batchesBefore = batchesDone_;
  batchesDone_ += batches;
  std::atomic<size_t> nextBatch{0};
  parallelFor(searches_.size(), [&](size_t t) {
    for(size_t b = nextBatch++; b < batches; b = nextBatch++) {
      std::vector<const std::vector<int>*> rows;
      for(size_t line : batchLines[b])
        rows.push_back(&sources[line]);
      // the batch's draws: the seed and the batch's place in the whole input, whichever thread
      // searches it (batches never cross a window, so they are the same on any number of threads)
      uint64_t seed = OutputSampling::batchKey(samplingSeed_, batchesBefore + b);
      auto nbest = searches_[t]->search(Batch::fromSources(rows), seed);
      for(size_t i = 0; i < batchLines[b].size(); ++i) {
        if(rightLeft_)  // the words and alignments in reading order; the scores stay in the model's, as Marian's
          for(Hypothesis& h : nbest[i]) {
            std::reverse(h.words.begin(), h.words.end());
            h.alignment = readingOrder(h.alignment, /*trgEndsWithEos=*/h.alignment.size() > h.words.size());
          }
        out[batchLines[b][i]] = std::move(nbest[i]);
      }
    }
  });
  return out;
}

std::vector<std::vector<size_t>> decodingBatches(const std::vector<size_t>& lengths, size_t miniBatch,
                                                 const DecodingLimits& limits, const std::vector<size_t>* sortLengths,
                                                 const std::vector<size_t>* tieLengths) {
  const std::vector<size_t>& key = sortLengths ? *sortLengths : lengths;
  // Marian's maxi-batch (BatchGenerator::fetchBatches): the window's lines pushed in input order
  // onto a std::priority_queue and popped from its top: the longest first (by the key, then by
  // tieLengths), equal ones in the heap's order; unsorted, the last line first (Marian orders by
  // id). So a line shares its batch, and with it its length limit, with the lines it does there.
  auto before = [&](size_t a, size_t b) {
    if(!limits.sortByLength)
      return a < b;
    if(key[a] != key[b])
      return key[a] < key[b];
    return tieLengths && (*tieLengths)[a] < (*tieLengths)[b];
  };
  std::vector<size_t> order;
  order.reserve(lengths.size());
  size_t window = limits.maxiBatch ? limits.maxiBatch * miniBatch : lengths.size();
  for(size_t begin = 0; begin < lengths.size(); begin += window) {
    std::priority_queue<size_t, std::vector<size_t>, decltype(before)> queue(before);
    for(size_t i = begin; i < std::min(lengths.size(), begin + window); ++i)
      queue.push(i);
    for(; !queue.empty(); queue.pop())
      order.push_back(queue.top());
  }
  // mini-batches as Marian's (miniBatchIsFull), none crossing a window
  std::vector<std::vector<size_t>> batches;
  for(size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1, words = lengths[order[begin]];
    while(end < order.size() && end % window != 0) {
      if(miniBatchIsFull(end - begin, words, miniBatch, limits.miniBatchWords))
        break;
      words += lengths[order[end]];
      ++end;
    }
    batches.emplace_back(order.begin() + long(begin), order.begin() + long(end));
    begin = end;
  }
  return batches;
}

}  // namespace marian
