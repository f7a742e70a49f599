#include "common/marian_only_options.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace marian {

namespace {

// Marian v1.12.43's options of marian and marian-decoder that this program lacks (from its
// `--dump-config full` and src/common/config_parser.cpp), with the values that ask for nothing:
// Marian's defaults, several separated by '|' where its programs differ, or "*" where no value
// changes a result here (threads, logs, options read only by a feature that is itself refused
// unless off).
struct MarianOnlyOption {
  const char* name;
  const char* inert;
};

constexpr MarianOnlyOption kMarianOnly[] = {
    // general
    {"authors", "false"}, {"cite", "false"}, {"build-info", "\"\""}, {"interpolate-env-vars", "false"},
    {"log-time-zone", "*"}, {"check-nan", "*"},  // a NaN or infinite cost always stops training here
    {"port", "*"}, {"model-mmap", "*"},
    // model
    {"factors-dim-emb", "0"}, {"factors-combine", "*"}, {"lemma-dependency", "*"}, {"lemma-dim-emb", "0"},
    {"input-types", "[]"}, {"input-reorder", "[]"}, {"input-join-fields", "false"}, {"best-deep", "false"},
    {"output-omit-bias", "false"}, {"transformer-no-projection", "false"},
    {"transformer-rnn-projection", "false"}, {"transformer-pool", "false"},
    {"transformer-decoder-autoreg", "self-attention"}, {"transformer-dim-aan", "*"}, {"transformer-aan-depth", "*"},
    {"transformer-aan-activation", "*"}, {"transformer-aan-nogate", "*"},
    {"transformer-train-position-embeddings", "false"}, {"transformer-disable-position-embeddings", "false"},
    {"transformer-depth-scaling", "false"}, {"transformer-attention-mask", "default"},
    {"transformer-alibi-shift", "false"}, {"transformer-alibi-trainable", "false"}, {"alibi", "false"},
    {"separator-symbol", "*"}, {"transformer-no-bias", "false"}, {"transformer-no-affine", "false"},
    {"bert-mask-symbol", "*"}, {"bert-sep-symbol", "*"}, {"bert-class-symbol", "*"}, {"bert-masking-fraction", "*"},
    {"bert-train-type-embeddings", "*"}, {"bert-type-vocab-size", "*"}, {"comet-final-sigmoid", "*"},
    {"comet-stop-grad", "*"}, {"comet-mix", "*"}, {"comet-mix-norm", "*"}, {"comet-pool", "*"},
    {"comet-mix-transformation", "*"}, {"comet-dropout", "*"}, {"comet-mixup", "*"}, {"comet-mixup-reg", "*"},
    {"comet-augment-bad", "*"}, {"comet-pooler-ffn", "*"}, {"comet-prepend-zero", "*"}, {"comet-use-separator", "*"},
    {"char-stride", "*"}, {"char-highway", "*"}, {"char-conv-filters-num", "*"}, {"char-conv-filters-widths", "*"},
    {"ulr", "false"}, {"ulr-query-vectors", "\"\""}, {"ulr-keys-vectors", "\"\""},
    {"ulr-trainable-transformation", "*"}, {"ulr-dim-emb", "*"}, {"ulr-dropout", "*"},
    {"ulr-softmax-temperature", "*"},
    // training
    {"multi-loss-type", "sum"}, {"unlikelihood-loss", "false"}, {"factor-weight", "1"},
    {"sentencepiece-alphas", "[]"},
    {"disp-label-index", "*"}, {"logical-epoch", "[1e, 0]"}, {"sqlite", "\"\""}, {"sqlite-drop", "*"},
    {"exponential-smoothing-replace-freq", "0"}, {"embedding-vectors", "[]"}, {"embedding-normalization", "false"}, {"embedding-fix-src", "false"},
    {"embedding-fix-trg", "false"},
    // marian-decoder's (marian's are options here): decoding runs in float32
    {"fp16", "false"}, {"precision", "[float32]|[float32, float32]"},
    {"throw-on-divergence", "[]"}, {"custom-fallbacks", "*"},
    {"fp16-fallback-to-fp32", "*"}, {"recover-from-fallback-after", "*"}, {"gradient-norm-average-window", "100"},
    {"dynamic-gradient-scaling", "[]"}, {"check-gradient-nan", "false"},
    {"normalize-gradient-by-ratio", "false"}, {"train-embedder-rank", "[]"}, {"task", "[]"},
    {"quiet-validation", "*"},  // validation logs no translations here
    {"no-nccl", "*"}, {"sharding", "*"}, {"sync-freq", "*"}, {"gradient-checkpointing", "*"},
    {"all-caps-every", "0"}, {"english-title-case-every", "0"},
    {"mini-batch-words-ref", "0"}, {"mini-batch-warmup", "0"}, {"mini-batch-track-lr", "*"},
    {"mini-batch-round-up", "*"},
    {"quantize-bits", "0"}, {"quantize-optimization-steps", "*"}, {"quantize-log-based", "*"},
    {"quantize-biases", "*"},
    // translation (the first three are the decoder's here; Marian's training has them too)
    {"ignore-model-config", "false"}, {"n-best", "false"}, {"word-scores", "false"}, {"allow-special", "false"}, {"force-decode", "false"}, {"stat-freq", "*"}, {"no-spm-encode", "false"},
    {"no-spm-decode", "false"},
    {"skip-cost", "false"}, {"shortlist", "[]"}, {"output-sampling", "[]"},
    {"output-approx-knn", "[]"}, {"optimize", "false"}, {"gemm-type", "float32"}, {"quantize-range", "*"},
    {"encryption-key-path", "\"\""},
};

// A value with YAML's spellings folded: numbers as numbers, booleans as booleans, an empty
// string, null and an empty list alike, a one-element list as its element.
std::vector<std::string> canonical(const YAML::Node& v) {
  std::vector<std::string> items;
  auto scalar = [](const YAML::Node& s) -> std::string {
    const std::string& t = s.Scalar();
    char* end = nullptr;
    double d = std::strtod(t.c_str(), &end);
    if(!t.empty() && end && *end == '\0')
      return "number:" + std::to_string(d);
    bool b;
    if(YAML::convert<bool>::decode(s, b))
      return b ? "bool:true" : "bool:false";
    return "text:" + t;
  };
  if(v.IsSequence()) {
    for(const YAML::Node& item : v)
      items.push_back(item.IsScalar() ? scalar(item) : YAML::Dump(item));
  } else if(v.IsScalar() && !v.Scalar().empty()) {
    items.push_back(scalar(v));
  } else if(v.IsMap()) {
    items.push_back(YAML::Dump(v));
  }
  return items;
}

const MarianOnlyOption* find(const std::string& key) {
  for(const MarianOnlyOption& o : kMarianOnly)
    if(key == o.name)
      return &o;
  return nullptr;
}

}  // namespace

bool acceptMarianOnlyOption(const std::string& key, const YAML::Node& value, const std::string& where) {
  const MarianOnlyOption* option = find(key);
  if(!option)
    return false;
  std::string inert = option->inert;
  if(inert == "*")
    return true;
  std::vector<std::string> given = canonical(value);
  std::string shown;
  for(size_t begin = 0; begin <= inert.size();) {
    size_t end = inert.find('|', begin);
    if(end == std::string::npos)
      end = inert.size();
    std::string one = inert.substr(begin, end - begin);
    if(canonical(YAML::Load(one)) == given)
      return true;
    shown += (shown.empty() ? "" : " or ") + one;
    begin = end + 1;
  }
  std::string valueText = YAML::Dump(value);
  ABORT("Option '{}: {}'{}: Marian's option is not implemented by this program, which accepts it only with the "
        "value that asks for nothing ({})",
        key, valueText, where, shown);
}

std::vector<std::string> marianOnlyOptionNames() {
  std::vector<std::string> names;
  for(const MarianOnlyOption& o : kMarianOnly)
    names.push_back(o.name);
  return names;
}

}  // namespace marian
