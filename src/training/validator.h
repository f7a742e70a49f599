#pragma once
// defines: marian::Validator — scores a model on --valid-sets with --valid-metrics
// (cross-entropy: summed cross-entropy per sentence, as Marian reports it for ce-sum;
// ce-mean-words: per target label; perplexity: exp(ce-mean-words); bleu and translation: the
// corpus BLEU of the beam-search translations of the sources against the references, written
// to --valid-translation-output when given).
#include <memory>
#include <string>
#include <vector>

#include "data/batch_generator.h"
#include "models/encoder_decoder.h"
#include "translator/translator.h"

namespace marian {

class Validator {
public:
  Validator(const Options& options, const std::vector<std::shared_ptr<Vocab>>& vocabs);

  const std::vector<std::string>& metrics() const { return metrics_; }
  // One value per metric for the model with these flat parameter values; their count must
  // match this validator's own graph, which is checked.
  std::vector<double> validate(const std::vector<float>& values, size_t expectedSize);
  // bleu is sacreBLEU's on detokenized text, which is what Marian calls bleu-detok
  static bool higherIsBetter(const std::string& metric) {
    return metric == "bleu" || metric == "bleu-detok" || metric == "translation";
  }

private:
  double translationBleu(const std::vector<float>& values);
  std::vector<std::string> metrics_;
  Options options_;
  std::vector<std::shared_ptr<Vocab>> vocabs_;
  std::unique_ptr<Translator> translator_;
  std::vector<std::string> sources_, references_;
  std::unique_ptr<Corpus> corpus_;
  std::unique_ptr<BatchGenerator> batches_;
  std::unique_ptr<ExpressionGraph> graph_;
  std::unique_ptr<EncoderDecoder> model_;
};

}  // namespace marian
