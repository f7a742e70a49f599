#pragma once
// defines: marian::Validator — scores a model on --valid-sets with --valid-metrics
// with Marian's meanings: cross-entropy (summed cross-entropy per sentence, as Marian reports it
// for ce-sum), ce-mean-words (per target label), perplexity (exp(ce-mean-words)); on the
// beam-search translations of the sources, written to --valid-translation-output ({E} {B} {U}
// {T} filled in) or a temporary file: bleu / bleu-detok (sacreBLEU's on detokenized text), chrf
// (Marian's chrF), translation (the score --valid-script-path prints for the translation file;
// BLEU when no script is given, where Marian reports 0); valid-script (the script's score for
// the model saved as MODEL.dev.npz, e.g. model.npz.dev.npz).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_generator.h"
#include "models/encoder_decoder.h"
#include "training/loop/training_state.h"
#include "translator/translator.h"

namespace marian {

class Validator {
public:
  // writes a model file (path, flat values) as training saves it, for the valid-script metric
  using ModelWriter = std::function<void(const std::string&, const std::vector<float>&)>;
  Validator(const Options& options, const std::vector<std::shared_ptr<Vocab>>& vocabs, ModelWriter writeModel = {});
  // Whether a run validates, as Marian decides: --valid-sets or --valid-script-path given (a
  // script may score the model alone), and --valid-freq not 0.
  static bool configured(const Options& options);

  const std::vector<std::string>& metrics() const { return metrics_; }
  // One value per metric for the model with these flat parameter values; their count must
  // match this validator's own graph, which is checked. `state` fills the output file's template.
  std::vector<double> validate(const std::vector<float>& values, size_t expectedSize, const TrainingState& state);
  // bleu is sacreBLEU's on detokenized text, which is what Marian calls bleu-detok
  static bool higherIsBetter(const std::string& metric) {
    return metric == "bleu" || metric == "bleu-detok" || metric == "translation" || metric == "chrf" ||
           metric == "valid-script";
  }
  static bool translates(const std::string& metric) { return higherIsBetter(metric) && metric != "valid-script"; }
  // Errors on metrics that cannot be computed as given (one named twice, valid-script without a
  // script, a script no metric uses): the trainer calls it before the training data is loaded,
  // and constructs a Validator only from options it passed.
  static void checkMetrics(const Options& options);

private:
  // the best translation of every validation source, by a translator made for it: its graphs
  // (a copy of the parameters and a workspace per device) are freed before training goes on
  std::vector<std::string> translate(const std::vector<float>& values);
  double score(const std::string& metric, const std::vector<std::string>& hyps, const std::string& outputFile) const;
  std::vector<std::string> metrics_;
  Options options_;
  std::vector<std::shared_ptr<Vocab>> vocabs_;
  std::vector<std::string> sources_, references_;
  std::unique_ptr<Corpus> corpus_;
  std::unique_ptr<BatchGenerator> batches_;
  std::unique_ptr<ExpressionGraph> graph_;
  std::unique_ptr<EncoderDecoder> model_;
  ModelWriter writeModel_;
};

}  // namespace marian
