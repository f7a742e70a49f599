#pragma once
// defines: modelConfigYaml, architectureDifferences, architectureOfModel — a model's configuration
// as it is saved with the model (model.npz's special:model.yml, the checkpoint's record of the
// architecture), what a resume compares with it, and what the decoder and the scorer read back.
#include <string>
#include <vector>

#include "common/options.h"

namespace marian {

// special:model.yml as Marian writes it into model.npz: only the options that define the model
// (Marian's modelFeatures_ in models/encoder_decoder.cpp, those this program has), dim-vocabs
// the vocabulary sizes trained with, and "version". Marian applies every embedded key over its
// decoder's command line, so a training option here (beam-size, max-length) would override it.
std::string modelConfigYaml(const Options& options, const std::vector<size_t>& vocabSizes);
// The architecture options whose values in `savedYaml` (what modelConfigYaml wrote for a model)
// differ from `options`: "--transformer-ffn-activation relu (this run: swish), ...", or "" when
// none (numbers compared as numbers; dim-vocabs and version are not options of the architecture).
std::string architectureDifferences(const std::string& savedYaml, const Options& options);
// The architecture of a model file: the configuration it holds (special:model.yml, as in
// Marian), which came with its weights; else MODEL.yml beside it (the trainer writes both). A
// MODEL.yml from another run beside a copied model must not decide the architecture.
Options architectureOfModel(const std::string& modelPath);

}  // namespace marian
