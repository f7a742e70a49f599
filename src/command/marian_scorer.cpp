// marian-scorer: what a model says of given translations, as Marian's scorer: per pair the
// target's log-probability given its source (`marian-scorer -m model.npz -v src.spm trg.spm -t
// src trg`), or with --summary one figure for the whole set; --n-best adds it as a feature to an
// n-best list. The architecture comes from the configuration the model file holds.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/logging.h"
#include "common/model_config.h"
#include "common/options.h"
#include "data/corpus.h"
#include "data/pair_reader.h"
#include "data/text_output.h"
#include "data/vocab.h"
#include "tensors/backend.h"
#include "tensors/devices_from_options.h"
#include "translator/scorer.h"
#include "translator/translator.h"

using namespace marian;

namespace {

// Marian's Rescore: --summary's figure of the summed cross-entropy, its labels and pairs.
double summaryOf(const std::string& summary, double ce, size_t labels, size_t pairs) {
  if(summary == "perplexity")
    return std::exp(ce / double(labels));
  if(summary == "ce-sum")
    return ce;
  if(summary == "ce-mean-words")
    return ce / double(labels);
  return ce / double(pairs);  // cross-entropy, ce-mean
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::optional<Options> started = startProgram(argc, argv, ProgramMode::scoring);
    if(!started)
      return 0;
    const Options& o = *started;
    logProgramStart(argc, argv, o);
    std::string modelPath = o.get<std::string>("model");
    std::string summary = o.has("summary") ? o.get<std::string>("summary") : "";
    float normalize = o.get<float>("normalize");  // Marian's bare -n: 1
    bool wordScores = o.get<bool>("word-scores"), nbest = o.get<bool>("n-best");
    std::string feature = o.get<std::string>("n-best-feature");
    std::string alignment = o.get<std::string>("alignment");
    std::optional<AlignmentOutput> alignmentOutput;  // --alignment: checked before any work
    if(!alignment.empty())
      alignmentOutput.emplace(alignment);
    ABORT_IF(!summary.empty() && alignmentOutput, "--alignment cannot be used with --summary (Marian's rule)");
    ABORT_IF(!summary.empty() && normalize != 0.f, "--normalize cannot be used with --summary (Marian's rule): the summary "
                                            "is of the whole set");
    ABORT_IF(!summary.empty() && wordScores, "--word-scores cannot be used with --summary (Marian's rule)");
    ABORT_IF(!o.has("train-sets"), "Give the pairs to score with -t/--train-sets SOURCE TARGET");
    bool tsv = o.get<bool>("tsv");
    ABORT_IF(tsv && o.get<int>("tsv-fields") != 0 && o.get<int>("tsv-fields") != 2,
             "--tsv-fields {}: a scored pair is two fields", o.get<int>("tsv-fields"));
    // every input opened before the model is loaded: a missing file is said before any work
    PairReader pairs(o.get<std::vector<std::string>>("train-sets"), tsv, nbest);

    Options architecture = architectureOfModel(modelPath);
    std::vector<std::shared_ptr<Vocab>> vocabs =
        modelVocabs(architecture, o.has("vocabs") ? o.get<std::vector<std::string>>("vocabs") : std::vector<std::string>{},
                    modelPath);
    std::unique_ptr<TextOutput> out;  // --summary prints its figure on stdout, as Marian
    if(summary.empty())
      out = std::make_unique<TextOutput>(o.get<std::string>("output"), "the scores");
    std::vector<Device> devices = devicesFromOptions(o);
    setGpuTf32(o.get<bool>("tf32"));
    ScoringBatches batching = scoringBatches(o);
    Scorer scorer(architecture, vocabs, devices, batching);
    scorer.load(modelPath);
    LOG(info, "[score] Loaded {} ({} parameters)", modelPath, scorer.parameterCount());

    size_t maxLength = size_t(o.get<int>("max-length"));
    bool crop = o.get<bool>("max-length-crop");
    auto encoded = [&](const std::string& text, size_t side, const TextPair& pair) {
      std::vector<int> ids = vocabs[side]->encode(text);
      if(ids.size() > maxLength) {  // tokens with </s>, as Marian counts them
        ABORT_IF(!crop, "The {} at {} has {} tokens (</s> included), more than --max-length {}: give "
                        "--max-length-crop to crop it, or a larger --max-length",
                 side ? "target" : "source", pairs.where(pair), ids.size(), maxLength);
        cropWords(ids, maxLength, vocabs[side]->eosId());
      }
      return ids;
    };

    // scored and written a part at a time: memory is a part's whatever the corpus's size
    size_t partPairs = batching.maxiBatch * batching.miniBatch * devices.size();
    std::vector<std::vector<int>> sources, targets;
    std::vector<std::string> nbestLines;
    double ce = 0, seconds = 0;
    size_t labels = 0, scored = 0;
    auto scorePart = [&] {
      auto start = std::chrono::steady_clock::now();
      std::vector<PairScore> scores =
          scorer.score(std::move(sources), std::move(targets), wordScores, alignmentOutput.has_value());
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::string text;
      for(size_t i = 0; i < scores.size(); ++i) {
        ce -= scores[i].logProb;
        labels += scores[i].labels;
        // Marian's arithmetic: float scores, divided by the target's length with --normalize (the
        // length to the power N: Marian's bare -n is 1)
        float score = float(scores[i].logProb);
        if(normalize != 0.f && score != 0.f)
          score /= std::pow(float(scores[i].labels), normalize);
        // the fields after the score, as Marian's: the alignment, then the word scores
        std::vector<std::string> fields;
        if(alignmentOutput)
          fields.push_back(alignmentOutput->text(scores[i].alignment));
        if(wordScores)
          fields.push_back(wordScoresText(scores[i].wordLogProbs));
        if(!summary.empty())
          continue;
        if(nbest) {
          text += nbestWithFeature(nbestLines[i], feature, score, fields) + "\n";
          continue;
        }
        text += formatNumber("%f", double(score));
        for(const std::string& field : fields)
          text += " ||| " + field;
        text += "\n";
      }
      if(out) {
        out->write(text);
        out->flush();
      }
      scored += scores.size();
      sources.clear();
      targets.clear();
      nbestLines.clear();
    };
    for(TextPair pair; pairs.next(pair);) {
      sources.push_back(encoded(pair.src, 0, pair));
      targets.push_back(encoded(pair.trg, 1, pair));
      if(nbest)
        nbestLines.push_back(std::move(pair.nbestLine));
      if(sources.size() == partPairs)
        scorePart();
    }
    if(!sources.empty())
      scorePart();
    if(out)
      out->close();
    LOG(info, "[score] Total cross-entropy {} : Total sentences {} : Total words {}", formatNumber("%.4f", ce), scored,
        labels);
    LOG(info, "[score] {} sentences in {}s: {} sentences/s ({} {}(s))", scored, formatNumber("%.2f", seconds),
        formatNumber("%.2f", double(scored) / std::max(seconds, 1e-9)), devices.size(),
        onGpus(devices) ? "GPU" : "thread");
    if(!summary.empty()) {
      ABORT_IF(scored == 0, "--summary {}: no pairs were scored", summary);
      LOG(info, "[score] Reporting {} summary", summary);
      std::printf("%s\n", formatNumber("%g", summaryOf(summary, ce, labels, scored)).c_str());
    }
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
