#pragma once
// defines: marian::Translator — text in, n-best lists out: encodes lines with the source
// vocabulary, sorts them by length into mini-batches, runs BeamSearch on one graph per CPU
// thread, and returns the hypotheses in input order. Used by marian-decoder and by validation.
#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "data/vocab.h"
#include "graph/expression_graph.h"
#include "models/encoder_decoder.h"
#include "translator/beam_search.h"
#include "translator/device_models.h"

namespace marian {

// Bounds on the work per input: longer inputs are cropped to maxLength words (0: none), each
// graph's activations are planned to take workspaceMB (0: no plan). Batching: inputs are sorted by
// length within windows of maxiBatch mini-batches when sortByLength (Marian's maxi-batch and
// maxi-batch-sort src), so a mini-batch pads little; the output keeps the input order.
struct DecodingLimits {
  size_t maxLength = 0;
  size_t workspaceMB = 0;
  size_t maxiBatch = 0;  // 0: the whole input is one window
  bool sortByLength = true;
  size_t miniBatchWords = 0;  // Marian's --mini-batch-words: a batch ends once its source tokens pass it (0: off)
};

// The input lines of each mini-batch, by the lines' source lengths (</s> counted): --mini-batch
// lines, or with --mini-batch-words as Marian's, until their source words pass it; within
// windows of --maxi-batch mini-batches in Marian's order: longest first when sortByLength, by
// `sortLengths` where given (marian-scorer's target lengths), else by `lengths`, then by
// `tieLengths` where given (marian-scorer's other side), equal lines as Marian's queue pops them;
// unsorted, each window's last line first, as Marian's.
std::vector<std::vector<size_t>> decodingBatches(const std::vector<size_t>& lengths, size_t miniBatch,
                                                 const DecodingLimits& limits,
                                                 const std::vector<size_t>* sortLengths = nullptr,
                                                 const std::vector<size_t>* tieLengths = nullptr);

class Translator {
public:
  // modelOptions: the architecture (the training configuration); vocabs: source and target;
  // one graph per device (CPU cores or GPUs), each translating its share of the mini-batches.
  Translator(const Options& modelOptions, std::vector<std::shared_ptr<Vocab>> vocabs, const BeamOptions& beam,
             size_t miniBatch, const std::vector<Device>& devices, const DecodingLimits& limits);
  // An ensemble (Marian's -m A B ... --weights): an architecture and a weight a model, all of one
  // direction (--right-left) and of these vocabularies; a graph per model and device.
  Translator(const std::vector<Options>& architectures, const std::vector<float>& weights,
             std::vector<std::shared_ptr<Vocab>> vocabs, const BeamOptions& beam, size_t miniBatch,
             const std::vector<Device>& devices, const DecodingLimits& limits);
  // --output-sampling's draws derive from this seed (the decoder's --seed).
  void setSamplingSeed(uint64_t seed) { samplingSeed_ = seed; }
  ~Translator();
  // Parameter values from a model file (each model's, in order) or flat (one model's: validation)
  // (DeviceModels::load, setValues).
  void load(const std::vector<std::string>& modelPaths);
  void load(const std::string& modelPath) { load(std::vector<std::string>{modelPath}); }
  void setValues(const std::vector<float>& values);
  size_t parameterCount() const;  // of all the models

  // Each line's n-best list; a right-left model's hypotheses in reading order, their word scores
  // in the model's (as Marian prints them).
  std::vector<std::vector<Hypothesis>> translate(const std::vector<std::string>& lines);
  // detokenized text of a hypothesis
  std::string text(const Hypothesis& h) const { return vocabs_[1]->decode(h.words); }

private:
  std::vector<std::unique_ptr<DeviceModels>> models_;  // one an ensemble's model
  std::vector<std::unique_ptr<BeamSearch>> searches_;  // one per device
  bool rightLeft_;  // --right-left: the sources reversed, the translations back in reading order
  uint64_t samplingSeed_ = 0, batchesDone_ = 0;  // --output-sampling's seed; the batches translated so far
  std::vector<std::shared_ptr<Vocab>> vocabs_;
  BeamOptions beam_;
  size_t miniBatch_;
  DecodingLimits limits_;
};

// Marian's word scores, "WordScores= -0.12345 -1.23456 ..." (5 decimals), a field of its lines.
std::string wordScoresText(const std::vector<float>& scores);
// The beam options of decoding and validation (--beam-size, --normalize, --word-penalty,
// --max-length-factor).
BeamOptions beamOptions(const Options& options);
// marian-decoder's limits and batching: --max-length (inputs cropped), --workspace, --maxi-batch
// and --maxi-batch-sort (none or src).
DecodingLimits decodingLimits(const Options& options);

}  // namespace marian
