#include "models/encoder_decoder.h"

namespace marian {

std::unique_ptr<EncoderDecoder> createTransformer(const Options& o, size_t srcVocab, size_t trgVocab);
std::unique_ptr<EncoderDecoder> createS2S(const Options& o, size_t srcVocab, size_t trgVocab);

std::unique_ptr<EncoderDecoder> createModel(const Options& options, size_t srcVocab, size_t trgVocab) {
  std::string type = options.get<std::string>("type");
  if(type == "transformer")
    return createTransformer(options, srcVocab, trgVocab);
  if(type == "s2s" || type == "nematus")
    return createS2S(options, srcVocab, trgVocab);
  ABORT("Unknown --type '{}': this trainer supports transformer and s2s", type);
}

}  // namespace marian
