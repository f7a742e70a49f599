#include "translator/device_models.h"

#include <set>

#include "common/error.h"
#include "common/file_util.h"
#include "common/npz.h"
#include "tensors/devices_from_options.h"
#include "tensors/kernels.h"

namespace marian {

DeviceModels::DeviceModels(const Options& modelOptions, const std::vector<std::shared_ptr<Vocab>>& vocabs,
                           const std::vector<Device>& devices, size_t workspaceMB)
    : vocabs_(vocabs) {
  ABORT_IF(vocabs_.size() != 2, "A model needs a source and a target vocabulary, got {}", vocabs_.size());
  ABORT_IF(devices.empty(), "A model needs at least one device");
  setBlasThreads(devices);  // parallelism comes from the threads, one graph each
  // One sentence of </s> declares every parameter of the architecture.
  std::vector<int> srcEos{vocabs_[0]->eosId()}, trgEos{vocabs_[1]->eosId()};
  Batch declare = Batch::fromPairs({&srcEos}, {&trgEos});
  for(const Device& device : devices) {
    graphs_.push_back(std::make_unique<ExpressionGraph>(device, 1, workspaceMB));
    models_.push_back(createModel(modelOptions, vocabs_[0]->size(), vocabs_[1]->size()));
    models_.back()->loss(*graphs_.back(), declare, false);
    graphs_.back()->params().allocate();
    graphs_.back()->clear();
  }
}

void DeviceModels::load(const std::string& modelPath) {
  std::vector<NpzItem> items = readNpz(modelPath);
  const Parameters& params = graphs_[0]->params();
  std::set<std::string> declared;
  for(const auto& e : params.entries())
    declared.insert(e.name);
  for(const NpzItem& item : items) {
    // the embeddings and the output layer say which vocabulary sizes the model was trained with
    auto vocabCheck = [&](const std::string& name, const Vocab& vocab, const char* side) {
      if(item.name == name && !item.shape.empty())
        checkVocabularyFits(modelPath, side, item.shape[0], vocab);
    };
    vocabCheck("encoder_Wemb", *vocabs_[0], "source");
    vocabCheck("Wemb", *vocabs_[0], "source");
    vocabCheck("decoder_Wemb", *vocabs_[1], "target");
    if((item.name == "decoder_ff_logit_out_b" || item.name == "decoder_ff_logit_l2_b") && item.shape.size() == 2)
      checkVocabularyFits(modelPath, "target", item.shape[1], *vocabs_[1]);
    ABORT_IF(item.name.rfind("special:", 0) != 0 && !declared.count(item.name),
             "Model file {} holds parameter '{}', which this configuration's model does not have: it was "
             "trained with a different architecture (check --type, --enc-depth, --dec-depth, --dim-emb, ...)",
             modelPath, item.name);
  }
  setValues(params.readValues(items, modelPath));  // names the parameter missing or of another shape
}

void DeviceModels::setValues(const std::vector<float>& values) {
  ABORT_IF(values.size() != parameterCount(), "The model has {} parameter values, this architecture {}",
           values.size(), parameterCount());
  for(auto& g : graphs_)
    kernels::fromHost(g->params().values(), values);
}

std::vector<std::shared_ptr<Vocab>> modelVocabs(const Options& architecture, const std::vector<std::string>& paths,
                                                const std::string& modelPath) {
  ABORT_IF(paths.size() != 2, "Give a source and a target vocabulary with -v/--vocabs, got {}", paths.size());
  auto dims = architecture.get<std::vector<int>>("dim-vocabs");
  dims.resize(2, 0);
  std::vector<std::shared_ptr<Vocab>> vocabs;
  for(size_t i = 0; i < 2; ++i) {
    ABORT_IF(!fileExists(paths[i]), "Vocabulary {} does not exist", paths[i]);
    vocabs.push_back(loadOrCreateVocab(paths[i], {}, size_t(dims[i])));
    if(dims[i] > 0)
      checkVocabularyFits(modelPath, i == 0 ? "source" : "target", size_t(dims[i]), *vocabs[i]);
  }
  return vocabs;
}

void checkVocabularyFits(const std::string& modelPath, const char* side, size_t trained, const Vocab& vocab) {
  ABORT_IF(trained != vocab.size(),
           "Model file {} was trained with a {} vocabulary of {} entries, but {} has {}: use the model's vocabularies",
           modelPath, side, trained, vocab.path(), vocab.size());
}

}  // namespace marian
