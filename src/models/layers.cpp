#include "models/layers.h"

#include <cmath>

namespace marian {
namespace layers {

Expr dense(ExpressionGraph& g, const std::string& prefix, Expr x, int out, bool bias, const std::string& suffix) {
  Expr W = g.param(prefix + "_W" + suffix, {x->shape().back(), out}, inits::glorotUniform());
  if(!bias)
    return dot(x, W);
  Expr b = g.param(prefix + "_b" + suffix, {1, out}, inits::zeros());
  return affine(x, W, b);
}

Expr layerNorm(ExpressionGraph& g, const std::string& prefix, Expr x, const std::string& suffix) {
  int d = x->shape().back();
  Expr scale = g.param(prefix + "_ln_scale" + suffix, {1, d}, inits::ones());
  Expr bias = g.param(prefix + "_ln_bias" + suffix, {1, d}, inits::zeros());
  return marian::layerNorm(x, scale, bias, 1e-6f);
}

Expr embeddingTable(ExpressionGraph& g, const std::string& name, int vocab, int dim) {
  return g.param(name, {vocab, dim}, inits::glorotUniform());
}

Expr embed(ExpressionGraph& g, Expr table, const std::vector<int>& ids, int batch, int len) {
  return rows(table, g.indices({batch, len}, ids));
}

Expr positions(ExpressionGraph& g, int len, int dim, int start) {
  std::vector<float> pe(size_t(len) * dim);
  int half = dim / 2;
  float logInc = std::log(10000.f) / float(std::max(half - 1, 1));
  for(int t = 0; t < len; ++t)
    for(int i = 0; i < half; ++i) {
      float v = float(t + start) * std::exp(-float(i) * logInc);
      pe[size_t(t) * dim + i] = std::sin(v);
      pe[size_t(t) * dim + half + i] = std::cos(v);
    }
  return g.constant({len, dim}, std::move(pe));
}

Expr shiftRight(ExpressionGraph& g, Expr emb) {
  int batch = emb->shape()[0], len = emb->shape()[1], dim = emb->shape()[2];
  Expr zeros = g.constant({batch, 1, dim}, std::vector<float>(size_t(batch) * dim, 0.f));
  if(len == 1)
    return zeros;
  return concat({zeros, slice(emb, 1, 0, len - 1)}, 1);
}

Expr outputLayer(ExpressionGraph& g, Expr h, Expr tied, int vocab, const std::string& prefix) {
  Expr b = g.param(prefix + "_b", {1, vocab}, inits::zeros());
  if(tied)
    return affine(h, tied, b, /*transW=*/true);
  Expr Wt = g.param(prefix + "_Wt", {vocab, h->shape().back()}, inits::glorotUniform());
  return affine(h, Wt, b, /*transW=*/true);
}

Expr summedCrossEntropy(ExpressionGraph& g, Expr h, Expr tied, int vocab, const Batch& batch,
                        float smoothing, const std::string& prefix) {
  std::vector<int> positions, labels;
  for(size_t i = 0; i < batch.trgMask.size(); ++i)
    if(batch.trgMask[i] != 0.f) {
      positions.push_back(int(i));
      labels.push_back(batch.trgIds[i]);
    }
  int n = int(positions.size());
  Expr states = reshape(h, {batch.sentences * batch.trgLen, h->shape().back()});
  Expr logits = outputLayer(g, rows(states, g.indices(std::move(positions))), tied, vocab, prefix);
  Expr ce = crossEntropy(logits, g.indices(std::move(labels)), nullptr, smoothing);
  return sum(reshape(ce, {1, n}), -1);
}

}  // namespace layers
}  // namespace marian
