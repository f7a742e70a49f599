#pragma once
// defines: marian::DeviceModels — a trained model on each device for inference (translation,
// scoring): per device a graph holding the parameters and the model that builds on it, the
// values loaded from a model file (checked against the architecture and the vocabularies) or
// given flat (validation).
#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "data/vocab.h"
#include "graph/expression_graph.h"
#include "models/encoder_decoder.h"

namespace marian {

class DeviceModels {
public:
  // modelOptions: the architecture (the training configuration); vocabs: source and target; each
  // graph's activations are planned to take workspaceMB (0: no plan).
  DeviceModels(const Options& modelOptions, const std::vector<std::shared_ptr<Vocab>>& vocabs,
               const std::vector<Device>& devices, size_t workspaceMB);
  // Parameter values from a model file, which must hold exactly this architecture's parameters;
  // anything else is an error naming the file and the parameter.
  void load(const std::string& modelPath);
  // Parameter values as a flat vector in the layout of this architecture (validation).
  void setValues(const std::vector<float>& values);
  size_t parameterCount() const { return graphs_[0]->params().totalSize(); }
  size_t size() const { return graphs_.size(); }
  ExpressionGraph& graph(size_t device) { return *graphs_[device]; }
  EncoderDecoder& model(size_t device) { return *models_[device]; }

private:
  std::vector<std::shared_ptr<Vocab>> vocabs_;
  std::vector<std::unique_ptr<ExpressionGraph>> graphs_;
  std::vector<std::unique_ptr<EncoderDecoder>> models_;
};

// The source and target vocabularies at `paths` (which must exist), cut to the model's dim-vocabs
// as training cut them; each checked against the model's sizes before the model is built (its
// own checks, tied embeddings, would speak first).
std::vector<std::shared_ptr<Vocab>> modelVocabs(const Options& architecture, const std::vector<std::string>& paths,
                                                const std::string& modelPath);
// A vocabulary with other entries than the model was trained with (`trained`, the size of its
// embeddings or of its dim-vocabs) is an error naming the model file and the vocabulary.
void checkVocabularyFits(const std::string& modelPath, const char* side, size_t trained, const Vocab& vocab);

}  // namespace marian
