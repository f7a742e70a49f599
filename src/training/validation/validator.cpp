#include "training/validation/validator.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/file_util.h"
#include "common/logging.h"
#include "common/option_table.h"
#include "common/scheduling_parameter.h"
#include "data/text_file.h"
#include "data/text_output.h"
#include "training/validation/validation_script.h"
#include "translator/bleu.h"
#include "translator/chrf.h"
#include "tensors/devices_from_options.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

// --valid-translation-output's template fields, as Marian's TrainingState::fillTemplate
std::string fillTemplate(std::string path, const TrainingState& state) {
  const std::pair<const char*, uint64_t> fields[] = {
      {"{E}", state.epochs}, {"{B}", state.batchesEpoch}, {"{U}", state.batches}, {"{T}", state.labelsTotal}};
  for(const auto& [field, value] : fields)
    for(size_t at = path.find(field); at != std::string::npos; at = path.find(field, at))
      path.replace(at, 3, std::to_string(value));
  return path;
}

// A file in --tempdir for a translation no --valid-translation-output asked to keep.
struct TemporaryFile {
  explicit TemporaryFile(const std::string& dir) {
    close(makeTempFile(dir, "marian-valid", "the validation translation", path));
  }
  ~TemporaryFile() { std::remove(path.c_str()); }
  std::string path;
};

}  // namespace

void Validator::checkMetrics(const Options& o) {
  auto metrics = o.get<std::vector<std::string>>("valid-metrics");
  bool script = !o.get<std::string>("valid-script-path").empty();
  for(size_t i = 0; i < metrics.size(); ++i) {
    // parsing checked each against the option's choices; options built in code are checked here
    option_table::checkChoiceOfAnyProgram("valid-metrics", metrics[i]);
    ABORT_IF(std::find(metrics.begin(), metrics.begin() + long(i), metrics[i]) != metrics.begin() + long(i),
             "--valid-metrics names {} twice", metrics[i]);
    ABORT_IF(metrics[i] == "valid-script" && !script, "--valid-metrics valid-script needs --valid-script-path");
    // a script that scores the saved model needs no validation set; every other metric reads one
    ABORT_IF(metrics[i] != "valid-script" && !(o.has("valid-sets") && !o.get<std::vector<std::string>>("valid-sets").empty()),
             "--valid-metrics {} needs --valid-sets (only valid-script, which scores the model file, validates "
             "without them)", metrics[i]);
  }
  ABORT_IF(script && std::count(metrics.begin(), metrics.end(), "translation") +
                             std::count(metrics.begin(), metrics.end(), "valid-script") == 0,
           "--valid-script-path is given but no --valid-metrics uses it: add translation (the script scores the "
           "translation file) or valid-script (the script scores the model)");
}

bool Validator::configured(const Options& o) {
  bool sets = o.has("valid-sets") && !o.get<std::vector<std::string>>("valid-sets").empty();
  bool script = !o.get<std::string>("valid-script-path").empty();
  return (sets || script) && bool(SchedulingParameter::parse(o.get<std::string>("valid-freq"), "valid-freq"));
}

Validator::Validator(const Options& o, const std::vector<std::shared_ptr<Vocab>>& vocabs, ModelWriter writeModel)
    : metrics_(o.get<std::vector<std::string>>("valid-metrics")), options_(o), vocabs_(vocabs),
      writeModel_(std::move(writeModel)) {
  if(std::count(metrics_.begin(), metrics_.end(), "translation") && o.get<std::string>("valid-script-path").empty())
    LOG(warn, "[valid] No --valid-script-path for the translation metric: it reports the translations' BLEU "
              "(Marian reports 0)");
  std::vector<std::string> sets = o.has("valid-sets") ? o.get<std::vector<std::string>>("valid-sets")
                                                      : std::vector<std::string>{};
  if(sets.empty())  // valid-script alone (checkMetrics)
    return;
  corpus_ = std::make_unique<Corpus>(sets, vocabs, size_t(o.get<int>("valid-max-length")), /*crop=*/true,
                                     o.get<bool>("right-left"));
  ABORT_IF(corpus_->size() == 0, "The validation set has no sentence pairs");
  BatchingOptions b;  // Marian's validation batches: in file order, maxi-batches of 10 sorted by source
  b.miniBatch = size_t(o.get<int>("valid-mini-batch"));
  b.miniBatchWords = 0;
  b.maxiBatch = 10;
  b.sortBy = "src";
  b.shuffleData = b.shuffleBatches = false;
  batches_ = std::make_unique<BatchGenerator>(*corpus_, b);
  graph_ = std::make_unique<ExpressionGraph>(devicesFromOptions(o)[0], 1, size_t(o.get<int>("workspace")));
  model_ = createModel(o, vocabs[0]->size(), vocabs[1]->size());
}

std::vector<std::string> Validator::translate(const std::vector<float>& values) {
  if(references_.empty()) {
    auto sets = options_.get<std::vector<std::string>>("valid-sets");
    sources_ = readLines(sets[0], "Validation source");
    references_ = readLines(sets[1], "Validation reference");
    ABORT_IF(sources_.size() != references_.size(), "Validation sets {} and {} have {} and {} lines", sets[0], sets[1],
             sources_.size(), references_.size());
  }
  Translator translator(options_, vocabs_, beamOptions(options_), size_t(options_.get<int>("valid-mini-batch")),
                        devicesFromOptions(options_),
                        DecodingLimits{size_t(options_.get<int>("valid-max-length")),
                                       size_t(options_.get<int>("workspace")), 0, true});
  translator.setValues(values);
  auto nbest = translator.translate(sources_);
  std::vector<std::string> hyps;
  for(const auto& list : nbest)
    hyps.push_back(list.empty() ? "" : translator.text(list[0]));
  return hyps;
}

double Validator::score(const std::string& metric, const std::vector<std::string>& hyps,
                        const std::string& outputFile) const {
  std::string script = options_.get<std::string>("valid-script-path");
  auto args = options_.get<std::vector<std::string>>("valid-script-args");
  if(metric == "translation" && !script.empty())
    return runValidationScript(script, args, outputFile);
  if(metric == "chrf")
    return corpusChrF(hyps, references_);
  BleuScore bleu = corpusBleu(hyps, references_);
  LOG(info, "[valid] {}", bleu.str());
  return bleu.score;
}

std::vector<double> Validator::validate(const std::vector<float>& values, size_t expectedSize,
                                        const TrainingState& state) {
  bool needsCrossEntropy = false, needsTranslation = false;
  for(const std::string& m : metrics_) {
    needsCrossEntropy = needsCrossEntropy || !higherIsBetter(m);
    needsTranslation = needsTranslation || translates(m);
  }
  double ce = 0;
  size_t labels = 0, sentences = 0;
  bool loaded = false;
  if(needsCrossEntropy)
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
    graph_->forward({loss});
    ce += kernels::toHost(loss->val())[0];
    labels += batch.trgWords;
    sentences += size_t(batch.sentences);
  }
  if(graph_)
    graph_->releaseWorkspace();  // its activations would otherwise stay beside training's
  std::vector<std::string> hyps;
  std::unique_ptr<TemporaryFile> temporary;
  std::string outputFile = fillTemplate(options_.get<std::string>("valid-translation-output"), state);
  if(needsTranslation) {
    hyps = translate(values);
    if(outputFile.empty()) {
      temporary = std::make_unique<TemporaryFile>(options_.get<std::string>("tempdir"));
      outputFile = temporary->path;
    }
    std::string text;
    for(const std::string& h : hyps)
      text += h + "\n";
    writeTextFile(outputFile, text);  // gzip-compressed for a .gz name, as Marian's
  }
  std::vector<double> out;
  for(const std::string& m : metrics_) {
    if(m == "valid-script") {  // Marian's: the model saved as MODEL.dev.npz (model.npz.dev.npz), the script scores it
      std::string dev = options_.get<std::string>("model") + ".dev.npz";
      ABORT_IF(!writeModel_, "The valid-script metric needs a model to save");
      writeModel_(dev, values);
      out.push_back(runValidationScript(options_.get<std::string>("valid-script-path"),
                                        options_.get<std::vector<std::string>>("valid-script-args")));
    } else if(translates(m))
      out.push_back(score(m, hyps, outputFile));
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
