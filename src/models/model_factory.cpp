#include "models/encoder_decoder.h"

namespace marian {

std::unique_ptr<EncoderDecoder> createTransformer(const Options& o, size_t srcVocab, size_t trgVocab);
std::unique_ptr<EncoderDecoder> createS2S(const Options& o, size_t srcVocab, size_t trgVocab);

namespace {
std::unique_ptr<EncoderDecoder> createOfType(const Options& options, size_t srcVocab, size_t trgVocab) {
  std::string type = options.get<std::string>("type");
  if(type == "transformer")
    return createTransformer(options, srcVocab, trgVocab);
  if(type == "s2s")
    return createS2S(options, srcVocab, trgVocab);
  // Marian's nematus type is another model (gru-nematus cells, Nematus's parameter names): not an s2s
  ABORT_IF(type == "nematus", "--type nematus (Marian's Nematus-compatible RNN, with gru-nematus cells and Nematus's "
                              "parameter names) is not implemented: this trainer's RNN is --type s2s");
  ABORT("Unknown --type '{}': this trainer supports transformer and s2s", type);
}
}  // namespace

std::unique_ptr<EncoderDecoder> createModel(const Options& options, size_t srcVocab, size_t trgVocab) {
  std::unique_ptr<EncoderDecoder> model = createOfType(options, srcVocab, trgVocab);
  model->setGuidedAlignmentWeight(options.get<float>("guided-alignment-weight", 0.1f));  // training's option
  return model;
}

}  // namespace marian
