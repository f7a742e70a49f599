#include "training/validator.h"

#include <cmath>

#include "common/file_util.h"
#include "common/logging.h"
#include "data/text_file.h"
#include "translator/bleu.h"
#include "tensors/devices_from_options.h"
#include "tensors/kernels.h"

namespace marian {

Validator::Validator(const Options& o, const std::vector<std::shared_ptr<Vocab>>& vocabs)
    : metrics_(o.get<std::vector<std::string>>("valid-metrics")), options_(o), vocabs_(vocabs) {
  for(const std::string& m : metrics_)
    ABORT_IF(m != "cross-entropy" && m != "ce-mean-words" && m != "perplexity" && !higherIsBetter(m),
             "Unknown --valid-metrics '{}': use cross-entropy, ce-mean-words, perplexity, bleu, bleu-detok or translation",
             m);
  corpus_ = std::make_unique<Corpus>(o.get<std::vector<std::string>>("valid-sets"), vocabs,
                                     size_t(o.get<int>("valid-max-length")), /*crop=*/true);
  ABORT_IF(corpus_->size() == 0, "The validation set has no sentence pairs");
  BatchingOptions b;
  b.miniBatch = size_t(o.get<int>("valid-mini-batch"));
  b.shuffleData = b.shuffleBatches = false;
  batches_ = std::make_unique<BatchGenerator>(*corpus_, b);
  graph_ = std::make_unique<ExpressionGraph>(devicesFromOptions(o)[0], 1, size_t(o.get<int>("workspace")));
  model_ = createModel(o, vocabs[0]->size(), vocabs[1]->size());
}

double Validator::translationBleu(const std::vector<float>& values) {
  if(!translator_) {
    auto sets = options_.get<std::vector<std::string>>("valid-sets");
    sources_ = readLines(sets[0], "Validation source");
    references_ = readLines(sets[1], "Validation reference");
    ABORT_IF(sources_.size() != references_.size(), "Validation sets {} and {} have {} and {} lines", sets[0], sets[1],
             sources_.size(), references_.size());
    translator_ = std::make_unique<Translator>(options_, vocabs_, beamOptions(options_),
                                               size_t(options_.get<int>("valid-mini-batch")),
                                               devicesFromOptions(options_),
                                               DecodingLimits{size_t(options_.get<int>("valid-max-length")),
                                                              size_t(options_.get<int>("workspace")), 0, true});
  }
  translator_->setValues(values);
  auto nbest = translator_->translate(sources_);
  std::vector<std::string> hyps;
  for(const auto& list : nbest)
    hyps.push_back(list.empty() ? "" : translator_->text(list[0]));
  std::string path = options_.get<std::string>("valid-translation-output");
  if(!path.empty()) {
    std::string text;
    for(const std::string& h : hyps)
      text += h + "\n";
    writeFileAtomic(path, text);
  }
  BleuScore bleu = corpusBleu(hyps, references_);
  LOG(info, "[valid] {}", bleu.str());
  return bleu.score;
}

std::vector<double> Validator::validate(const std::vector<float>& values, size_t expectedSize) {
  bool needsCrossEntropy = false;
  for(const std::string& m : metrics_)
    needsCrossEntropy = needsCrossEntropy || !higherIsBetter(m);
  double ce = 0;
  size_t labels = 0, sentences = 0;
  bool loaded = false;
  batches_->startEpoch(1);
  while(needsCrossEntropy && batches_->hasNext()) {
    Batch batch = batches_->next();
    graph_->clear();
    Expr loss = model_->loss(*graph_, batch, /*training=*/false);
    if(!loaded) {  // the first build declares the parameters: install the values
      graph_->params().allocate();
      ABORT_IF(graph_->params().totalSize() != expectedSize || values.size() != expectedSize,
               "Validation model has {} parameters, the trained one {}", graph_->params().totalSize(),
               expectedSize);
      kernels::fromHost(graph_->params().values(), values);
      loaded = true;
    }
    graph_->forward();
    ce += kernels::toHost(loss->val())[0];
    labels += batch.trgWords;
    sentences += size_t(batch.sentences);
  }
  std::vector<double> out;
  for(const std::string& m : metrics_) {
    if(higherIsBetter(m))
      out.push_back(translationBleu(values));
    else if(m == "cross-entropy")
      out.push_back(ce / double(sentences));
    else if(m == "ce-mean-words")
      out.push_back(ce / double(labels));
    else
      out.push_back(std::exp(ce / double(labels)));
  }
  return out;
}

}  // namespace marian
