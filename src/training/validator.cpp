#include "training/validator.h"

#include <cmath>

#include "common/logging.h"
#include "tensors/kernels.h"

namespace marian {

Validator::Validator(const Options& o, const std::vector<std::shared_ptr<Vocab>>& vocabs)
    : metrics_(o.get<std::vector<std::string>>("valid-metrics")) {
  for(const std::string& m : metrics_)
    ABORT_IF(m != "cross-entropy" && m != "ce-mean-words" && m != "perplexity",
             "Unknown --valid-metrics '{}': use cross-entropy, ce-mean-words or perplexity", m);
  corpus_ = std::make_unique<Corpus>(o.get<std::vector<std::string>>("valid-sets"), vocabs,
                                     size_t(o.get<int>("valid-max-length")), /*crop=*/true);
  ABORT_IF(corpus_->size() == 0, "The validation set has no sentence pairs");
  BatchingOptions b;
  b.miniBatch = size_t(o.get<int>("valid-mini-batch"));
  b.shuffleData = b.shuffleBatches = false;
  batches_ = std::make_unique<BatchGenerator>(*corpus_, b);
  graph_ = std::make_unique<ExpressionGraph>(cpuDevice(0), 1, 0);
  model_ = createModel(o, vocabs[0]->size(), vocabs[1]->size());
}

std::vector<double> Validator::validate(const std::vector<float>& values, size_t expectedSize) {
  double ce = 0;
  size_t labels = 0, sentences = 0;
  bool loaded = false;
  batches_->startEpoch(1);
  while(batches_->hasNext()) {
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
    if(m == "cross-entropy")
      out.push_back(ce / double(sentences));
    else if(m == "ce-mean-words")
      out.push_back(ce / double(labels));
    else
      out.push_back(std::exp(ce / double(labels)));
  }
  return out;
}

}  // namespace marian
