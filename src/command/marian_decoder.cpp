// marian-decoder: translates with a trained model, `marian-decoder -m model.npz -v src.spm trg.spm
// < input > output` or `-c model.npz.decoder.yml`. The architecture comes from the configuration
// the model file holds (special:model.yml), as in Marian.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>

#include "common/file_util.h"
#include "common/logging.h"
#include "common/model_config.h"
#include "common/options.h"
#include "data/text_file.h"
#include "data/text_output.h"
#include "data/vocab.h"
#include "data/word_alignment.h"
#include "tensors/backend.h"
#include "tensors/devices_from_options.h"
#include "translator/translator.h"

using namespace marian;

namespace {

// Lines of one window: --maxi-batch mini-batches (each window sorted as in the whole input; with
// Marian's defaults one line); the whole input when one window sorts all of it (--maxi-batch 0).
size_t linesPerWindow(const DecodingLimits& limits, size_t miniBatch) {
  size_t window = limits.maxiBatch * miniBatch;
  if(limits.sortByLength && window == 0)
    return SIZE_MAX;
  return std::max<size_t>(window, miniBatch);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::optional<Options> started = startProgram(argc, argv, ProgramMode::translation);
    if(!started)
      return 0;
    const Options& o = *started;
    logProgramStart(argc, argv, o);
    auto models = o.get<std::vector<std::string>>("models", {});
    ABORT_IF(models.empty(), "Give a model with -m/--models (or several: an ensemble)");
    // Marian's ensemble weights: one a model, 1 each when not given
    auto weights = o.get<std::vector<float>>("weights");
    if(weights.empty())
      weights.assign(models.size(), 1.f);
    auto vocabPaths = o.get<std::vector<std::string>>("vocabs", {});
    std::string alignment = o.get<std::string>("alignment");
    std::optional<AlignmentOutput> alignmentOutput;  // --alignment: checked before any work
    if(!alignment.empty())
      alignmentOutput.emplace(alignment);
    // Marian's --ignore-model-config: the architecture from this command line and -c files (every
    // model's); else each model's own
    std::vector<Options> architectures;
    for(const std::string& model : models)
      architectures.push_back(o.get<bool>("ignore-model-config")
                                  ? modelOptions(modelConfigYaml(o, {0, 0}), "the decoder's options (--ignore-model-config)")
                                  : architectureOfModel(model));
    std::vector<std::shared_ptr<Vocab>> vocabs = modelVocabs(architectures[0], vocabPaths, models[0]);
    if(o.get<bool>("no-spm-encode"))  // the input is already in pieces
      vocabs[0] = unitsOf(vocabs[0]);
    if(o.get<bool>("no-spm-decode"))  // the output stays in pieces
      vocabs[1] = unitsOf(vocabs[1]);
    auto inputs = o.get<std::vector<std::string>>("input");
    ABORT_IF(inputs.size() != 1, "Give one input with -i/--input, got {}", inputs.size());

    // the output opened first: a path that cannot be written is said before any work (a .gz name
    // is written gzip-compressed, as Marian's)
    TextOutput out(o.get<std::string>("output"), "the translations");
    std::vector<Device> devices = devicesFromOptions(o);
    setGpuTf32(o.get<bool>("tf32"));
    Translator translator(architectures, weights, vocabs, beamOptions(o), size_t(o.get<int>("mini-batch")), devices,
                          decodingLimits(o));
    translator.load(models);
    uint64_t seed = uint64_t(o.get<size_t>("seed"));  // 0: drawn, as Marian's (and said, to repeat the samples)
    if(seed == 0 && !o.get<std::vector<std::string>>("output-sampling").empty()) {
      seed = std::max<uint64_t>(1, std::random_device()());
      LOG(info, "[translate] Output sampling with the drawn --seed {}", seed);
    }
    translator.setSamplingSeed(seed);
    std::string loaded = models[0];
    for(size_t m = 1; m < models.size(); ++m)
      loaded += ", " + models[m];
    LOG(info, "[translate] Loaded {} ({} parameters), beam size {}", loaded, translator.parameterCount(),
        o.get<int>("beam-size"));

    // the input translated and written a part at a time: memory is a part's, and what is done is
    // out (a pipe sees it) before the rest is read
    bool nBest = o.get<bool>("n-best"), wordScores = o.get<bool>("word-scores");
    // the fields after a translation, as Marian's: " ||| alignment" and " ||| WordScores= ..."
    auto fieldsOf = [&](const Hypothesis& h) {
      return (alignmentOutput ? " ||| " + alignmentOutput->text(h.alignment) : std::string()) +
             (wordScores ? " ||| " + wordScoresText(h.wordScores) : std::string());
    };
    size_t written = 0;  // lines translated before this part
    double seconds = 0;
    std::vector<std::string> part;
    auto translatePart = [&] {
      auto start = std::chrono::steady_clock::now();
      auto nbest = translator.translate(part);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ostringstream text;
      for(size_t i = 0; i < nbest.size(); ++i) {
        if(nbest[i].empty()) {  // cannot happen: max length forces </s>; keep the line count anyway
          text << "\n";
          continue;
        }
        if(!nBest) {
          text << translator.text(nbest[i][0]) << fieldsOf(nbest[i][0]) << "\n";
          continue;
        }
        for(const Hypothesis& h : nbest[i]) {
          // as Marian's: each model's own log-probability, F0= ... F1= ..., then the ranking score
          text << written + i << " ||| " << translator.text(h) << fieldsOf(h) << " |||";
          for(size_t m = 0; m < h.modelScores.size(); ++m)
            text << " F" << m << "= " << h.modelScores[m];
          text << " ||| " << h.normalized << "\n";
        }
      }
      out.write(text.str());
      out.flush();
      written += part.size();
      part.clear();
    };
    // A part is translated once it holds a window for every device, or, when the input has no
    // line waiting (a pipe kept open), once it holds one window: as Marian, which translates each
    // window as it is read, the first line's translation comes before the second line is written.
    size_t windowLines = linesPerWindow(decodingLimits(o), size_t(o.get<int>("mini-batch")));
    size_t partLines = windowLines == SIZE_MAX ? SIZE_MAX : windowLines * devices.size();
    auto onLine = [&](std::string& line) {
      part.push_back(std::move(line));
      if(part.size() == partLines)
        translatePart();
    };
    auto onIdle = [&] {  // whole windows, so that batches (and samples) do not depend on the pipe's pace
      if(part.empty() || part.size() < windowLines)
        return;
      size_t whole = part.size() / windowLines * windowLines;
      std::vector<std::string> rest(std::make_move_iterator(part.begin() + long(whole)),
                                    std::make_move_iterator(part.end()));
      part.resize(whole);
      translatePart();
      part = std::move(rest);
    };
    forEachInputLine(inputs[0], "Input", onLine, onIdle);
    if(!part.empty())
      translatePart();
    out.close();
    LOG(info, "[translate] {} sentences in {}s: {} sentences/s ({} {}(s), beam {})", written,
        formatNumber("%.2f", seconds), formatNumber("%.2f", double(written) / std::max(seconds, 1e-9)),
        devices.size(), onGpus(devices) ? "GPU" : "thread", o.get<int>("beam-size"));
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
