#include "translator/translator.h"

#include "tensors/devices_from_options.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>

#include "common/error.h"
#include "common/logging.h"
#include "common/npz.h"
#include "common/parallel.h"
#include "data/batch_generator.h"
#include "tensors/kernels.h"

namespace marian {

struct Translator::Worker {
  std::unique_ptr<ExpressionGraph> graph;
  std::unique_ptr<EncoderDecoder> model;
  std::unique_ptr<BeamSearch> search;
};

BeamOptions beamOptions(const Options& o) {
  BeamOptions b;
  b.beamSize = o.get<int>("beam-size");
  b.normalize = o.get<float>("normalize");
  b.wordPenalty = o.get<float>("word-penalty");
  b.maxLengthFactor = o.get<float>("max-length-factor");
  b.maxLengthPerSentence = o.get<bool>("max-length-factor-per-sentence");
  b.allowUnk = o.get<bool>("allow-unk");
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
    : vocabs_(std::move(vocabs)), beam_(beam), miniBatch_(std::max<size_t>(1, miniBatch)), limits_(limits) {
  ABORT_IF(vocabs_.size() != 2, "Translation needs a source and a target vocabulary, got {}", vocabs_.size());
  ABORT_IF(devices.empty(), "Translation needs at least one device");
  setBlasThreads(devices);  // parallelism comes from the threads, one graph each
  // One sentence of </s> declares every parameter of the architecture.
  beam_.eosId = vocabs_[1]->eosId();
  beam_.unkId = vocabs_[1]->unkId();
  std::vector<int> eos{vocabs_[0]->eosId()};
  Batch declare = Batch::fromSources({&eos});
  declare.trgLen = 1;
  declare.trgIds = {vocabs_[1]->eosId()};
  declare.trgMask = {1.f};
  declare.trgWords = 1;
  for(const Device& device : devices) {
    auto w = std::make_unique<Worker>();
    w->graph = std::make_unique<ExpressionGraph>(device, 1, limits_.workspaceMB);
    w->model = createModel(modelOptions, vocabs_[0]->size(), vocabs_[1]->size());
    w->model->loss(*w->graph, declare, false);
    w->graph->params().allocate();
    w->graph->clear();
    w->search = std::make_unique<BeamSearch>(*w->model, *w->graph, beam_);
    workers_.push_back(std::move(w));
  }
}

Translator::~Translator() = default;

size_t Translator::parameterCount() const { return workers_[0]->graph->params().totalSize(); }

void Translator::load(const std::string& modelPath) {
  std::vector<NpzItem> items = readNpz(modelPath);
  const Parameters& params = workers_[0]->graph->params();
  std::set<std::string> declared;
  for(const auto& e : params.entries())
    declared.insert(e.name);
  for(const NpzItem& item : items) {
    // the embeddings and the output layer say which vocabulary sizes the model was trained with
    auto vocabCheck = [&](const std::string& name, const Vocab& vocab, const char* side) {
      if(item.name == name && !item.shape.empty())
        checkVocabularyFits(modelPath, side, item.shape[0], vocab);
    };
    vocabCheck("encoder_Wemb", *vocabs_[0], "source");
    vocabCheck("Wemb", *vocabs_[0], "source");
    vocabCheck("decoder_Wemb", *vocabs_[1], "target");
    if((item.name == "decoder_ff_logit_out_b" || item.name == "decoder_ff_logit_l2_b") && item.shape.size() == 2)
      checkVocabularyFits(modelPath, "target", item.shape[1], *vocabs_[1]);
    ABORT_IF(item.name.rfind("special:", 0) != 0 && !declared.count(item.name),
             "Model file {} holds parameter '{}', which this configuration's model does not have: it was "
             "trained with a different architecture (check --type, --enc-depth, --dec-depth, --dim-emb, ...)",
             modelPath, item.name);
  }
  setValues(params.readValues(items, modelPath));  // names the parameter missing or of another shape
}

void checkVocabularyFits(const std::string& modelPath, const char* side, size_t trained, const Vocab& vocab) {
  ABORT_IF(trained != vocab.size(),
           "Model file {} was trained with a {} vocabulary of {} entries, but {} has {}: use the model's vocabularies",
           modelPath, side, trained, vocab.path(), vocab.size());
}

void Translator::setValues(const std::vector<float>& values) {
  ABORT_IF(values.size() != parameterCount(), "The model has {} parameter values, this architecture {}",
           values.size(), parameterCount());
  for(auto& w : workers_)
    kernels::fromHost(w->graph->params().values(), values);
}

std::vector<std::vector<Hypothesis>> Translator::translate(const std::vector<std::string>& lines) {
  std::vector<std::vector<int>> sources;
  size_t cropped = 0;
  for(const std::string& line : lines) {
    sources.push_back(vocabs_[0]->encode(line, true));
    std::vector<int>& ids = sources.back();
    if(limits_.maxLength && ids.size() > limits_.maxLength) {  // tokens with </s>, as Marian
      ids.resize(limits_.maxLength);
      ids.back() = vocabs_[0]->eosId();
      ++cropped;
    }
  }
  if(cropped)
    LOG(warn, "[translate] {} input(s) longer than --max-length {} cropped to it", cropped, limits_.maxLength);
  std::vector<size_t> lengths;
  for(const std::vector<int>& ids : sources)
    lengths.push_back(ids.size());
  std::vector<std::vector<size_t>> batchLines = decodingBatches(lengths, miniBatch_, limits_);
  size_t batches = batchLines.size();
  std::vector<std::vector<Hypothesis>> out(lines.size());
  std::atomic<size_t> nextBatch{0};
  parallelFor(workers_.size(), [&](size_t t) {
    for(size_t b = nextBatch++; b < batches; b = nextBatch++) {
      std::vector<const std::vector<int>*> rows;
      for(size_t line : batchLines[b])
        rows.push_back(&sources[line]);
      auto nbest = workers_[t]->search->search(Batch::fromSources(rows));
      for(size_t i = 0; i < batchLines[b].size(); ++i)
        out[batchLines[b][i]] = std::move(nbest[i]);
    }
  });
  return out;
}

std::vector<std::vector<size_t>> decodingBatches(const std::vector<size_t>& lengths, size_t miniBatch,
                                                 const DecodingLimits& limits) {
  // by length within each maxi-batch window, longest first as Marian's queue gives them, so a
  // batch pads little (and the short ones share the last)
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  size_t window = limits.maxiBatch ? limits.maxiBatch * miniBatch : order.size();
  for(size_t begin = 0; limits.sortByLength && begin < order.size(); begin += window)
    std::stable_sort(order.begin() + long(begin), order.begin() + long(std::min(order.size(), begin + window)),
                     [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
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
