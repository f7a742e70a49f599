#include "models/layers.h"

#include <algorithm>
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
  return g.param(name, {vocab, dim}, inits::embeddingUniform());
}

Expr embed(ExpressionGraph& g, Expr table, const std::vector<int>& ids, int batch, int len) {
  return rows(table, g.indices({batch, len}, ids));
}

namespace {
// Marian's sinusoid of position t (SinusoidalPositionEmbeddings on the CPU and the GPU, its float
// arithmetic, an odd dim included): sines in the first dim / 2 columns, cosines in the rest; at 1
// and 2 columns, where Marian's divides by zero or takes i % 0, one timescale
void sinusoid(float* row, int t, int dim) {
  float timescales = float(dim) / 2;
  float logInc = std::log(10000.f) / (timescales > 1.f ? timescales - 1.f : 1.f);
  int half = std::max(int(timescales), 1);
  for(int i = 0; i < dim; ++i) {
    float v = float(t) * std::exp(float(i % half) * -logInc);
    row[i] = i < half ? std::sin(v) : std::cos(v);
  }
}
}  // namespace

Expr positions(ExpressionGraph& g, const std::vector<int>& times, int dim) {
  // each distinct position computed once: [first, last] (a decoding step's rows share one)
  auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  int first = times.empty() ? 0 : *lo, span = times.empty() ? 0 : *hi - first + 1;
  std::vector<float> table(size_t(span) * dim), pe(times.size() * dim);
  for(int t = 0; t < span; ++t)
    sinusoid(&table[size_t(t) * dim], first + t, dim);
  for(size_t r = 0; r < times.size(); ++r)
    std::copy_n(&table[size_t(times[r] - first) * dim], dim, &pe[r * dim]);
  return g.constant({int(times.size()), dim}, std::move(pe));
}

RealPositions realPositions(const std::vector<float>& mask, int sentences, int length) {
  ABORT_IF(mask.size() != size_t(sentences) * length, "A mask of {} for {} sentences of {} positions",
           mask.size(), sentences, length);
  RealPositions p;
  p.sentences = sentences;
  p.length = length;
  p.rowOf.assign(mask.size(), -1);
  for(size_t i = 0; i < mask.size(); ++i)
    if(mask[i] != 0.f) {
      p.rowOf[i] = p.rows();
      p.flat.push_back(int(i));
      p.times.push_back(int(i % size_t(length)));
    }
  return p;
}

std::vector<int> RealPositions::pick(const std::vector<int>& perPosition) const {
  std::vector<int> picked;
  picked.reserve(flat.size());
  for(int i : flat)
    picked.push_back(perPosition[size_t(i)]);
  return picked;
}

RealPositions allPositions(int sentences, int length) {
  return realPositions(std::vector<float>(size_t(sentences) * length, 1.f), sentences, length);
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
  Expr Wt = g.param(prefix + "_Wt", {vocab, h->shape().back()}, inits::embeddingUniform());
  return affine(h, Wt, b, /*transW=*/true);
}

Expr labelCrossEntropies(ExpressionGraph& g, Expr h, Expr tied, int vocab, const Batch& batch, float smoothing,
                         const std::string& prefix) {
  RealPositions real = realPositions(batch.trgMask, batch.sentences, batch.trgLen);
  Expr states = reshape(h, {batch.sentences * batch.trgLen, h->shape().back()});
  return crossEntropiesOfRows(g, rows(states, g.indices(real.flat)), tied, vocab, real.pick(batch.trgIds),
                              smoothing, prefix);
}

Expr crossEntropiesOfRows(ExpressionGraph& g, Expr h, Expr tied, int vocab, std::vector<int> labels, float smoothing,
                          const std::string& prefix) {
  int n = int(labels.size());
  ABORT_IF(h->shape().rank() != 2 || h->shape()[0] != n, "States {} for {} target labels", h->shape().toString(), n);
  Expr logits = outputLayer(g, h, tied, vocab, prefix);
  Expr ce = crossEntropy(logits, g.indices(std::move(labels)), nullptr, smoothing);
  return reshape(ce, {1, n});
}

}  // namespace layers
}  // namespace marian
