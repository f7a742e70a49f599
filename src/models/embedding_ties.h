#pragma once
// defines: marian::EmbeddingTies — which of a model's embedding tables are one, as Marian's options
// say: the output layer reads the target embeddings (--tied-embeddings, --tied-embeddings-all);
// source and target share one table (--tied-embeddings-src, --tied-embeddings-all), which needs
// one vocabulary size (an error naming both otherwise).
#include <cstddef>

#include "common/error.h"
#include "common/options.h"

namespace marian {

struct EmbeddingTies {
  bool output = false, source = false;

  static EmbeddingTies fromOptions(const Options& o, size_t srcVocab, size_t trgVocab) {
    EmbeddingTies t;
    t.output = o.get<bool>("tied-embeddings") || o.get<bool>("tied-embeddings-all");
    t.source = o.get<bool>("tied-embeddings-src") || o.get<bool>("tied-embeddings-all");
    ABORT_IF(t.source && srcVocab != trgVocab,
             "--tied-embeddings-all/--tied-embeddings-src need one vocabulary size, got {} and {}", srcVocab, trgVocab);
    return t;
  }
};

}  // namespace marian
