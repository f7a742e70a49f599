// The transformer (Vaswani et al. 2017) with Marian's options: pre/post-processing sequences
// ("dan" = dropout, add residual, layer-norm), tied embeddings, sinusoidal positions, label
// smoothing and three kinds of dropout.
#include <cmath>

#include "models/encoder_decoder.h"
#include "models/layers.h"

namespace marian {

namespace {

class Transformer : public EncoderDecoder {
public:
  Transformer(const Options& o, size_t srcVocab, size_t trgVocab)
      : srcVocab_(int(srcVocab)), trgVocab_(int(trgVocab)),
        dim_(o.get<int>("dim-emb")), heads_(o.get<int>("transformer-heads")),
        ffn_(o.get<int>("transformer-dim-ffn")),
        ffnDepth_(o.get<int>("transformer-ffn-depth", 2)),
        // Marian's decoder values: 0 takes the encoder's
        decFfn_(o.get<int>("transformer-decoder-dim-ffn", 0) ? o.get<int>("transformer-decoder-dim-ffn") : ffn_),
        decFfnDepth_(o.get<int>("transformer-decoder-ffn-depth", 0) ? o.get<int>("transformer-decoder-ffn-depth")
                                                                    : ffnDepth_),
        tiedLayers_(o.get<std::vector<int>>("transformer-tied-layers", {})),
        encDepth_(o.get<int>("enc-depth")), decDepth_(o.get<int>("dec-depth")),
        activation_(o.get<std::string>("transformer-ffn-activation")),
        pre_(o.get<std::string>("transformer-preprocess")),
        post_(o.get<std::string>("transformer-postprocess")),
        postEmb_(o.get<std::string>("transformer-postprocess-emb")),
        postTop_(o.get<std::string>("transformer-postprocess-top", "")),
        dropout_(o.get<float>("transformer-dropout")),
        dropoutAtt_(o.get<float>("transformer-dropout-attention")),
        dropoutFfn_(o.get<float>("transformer-dropout-ffn")),
        smoothing_(o.get<float>("label-smoothing")),
        tiedOutput_(o.get<bool>("tied-embeddings") || o.get<bool>("tied-embeddings-all")),
        tiedSrc_(o.get<bool>("tied-embeddings-src") || o.get<bool>("tied-embeddings-all")) {
    ABORT_IF(dim_ % heads_ != 0, "--dim-emb {} is not divisible by --transformer-heads {}", dim_, heads_);
    ABORT_IF(activation_ != "swish" && activation_ != "relu" && activation_ != "gelu",
             "--transformer-ffn-activation must be swish, gelu or relu, not '{}'", activation_);
    ABORT_IF(tiedSrc_ && srcVocab != trgVocab,
             "--tied-embeddings-all/--tied-embeddings-src need one vocabulary size, got {} and {}",
             srcVocab, trgVocab);
    ABORT_IF(!tiedLayers_.empty() && int(tiedLayers_.size()) != decDepth_,
             "--transformer-tied-layers names {} layers but the decoder has {} (--dec-depth): give one layer number "
             "per decoder layer",
             tiedLayers_.size(), decDepth_);
    for(const std::string* ops : {&pre_, &post_, &postEmb_, &postTop_})
      ABORT_IF(ops->find_first_not_of("dan") != std::string::npos,
               "Transformer processing '{}' may only use d (dropout), a (add), n (norm)", *ops);
  }

  std::string type() const override { return "transformer"; }

  Expr loss(ExpressionGraph& g, const Batch& batch, bool training) override {
    training_ = training;
    Expr srcTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "encoder_Wemb", srcVocab_, dim_);
    Expr trgTable = tiedSrc_ ? srcTable : layers::embeddingTable(g, "decoder_Wemb", trgVocab_, dim_);

    Expr srcMask = g.constant({batch.sentences, 1, 1, batch.srcLen}, batch.srcMask);
    Expr enc = encode(g, srcTable, batch, srcMask);
    Expr dec = decode(g, trgTable, batch, enc, srcMask);
    return layers::summedCrossEntropy(g, dec, tiedOutput_ ? trgTable : nullptr, trgVocab_, batch,
                                      training ? smoothing_ : 0.f);
  }

  Expr encodeSources(ExpressionGraph& g, const Batch& batch) override {
    training_ = false;
    Expr srcTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "encoder_Wemb", srcVocab_, dim_);
    return encode(g, srcTable, batch, g.constant({batch.sentences, 1, 1, batch.srcLen}, batch.srcMask));
  }

  Expr nextWordLogProbs(ExpressionGraph& g, const Batch& step, Expr context) override {
    training_ = false;
    Expr trgTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "decoder_Wemb", trgVocab_, dim_);
    Expr srcMask = g.constant({step.sentences, 1, 1, step.srcLen}, step.srcMask);
    // the whole prefix again (no cached keys and values): simple, and the decoder is small next
    // to the output layer, which runs for the last position only
    Expr dec = decode(g, trgTable, step, context, srcMask);
    Expr last = reshape(slice(dec, 1, step.trgLen - 1, step.trgLen), {step.sentences, dim_});
    return logSoftmax(layers::outputLayer(g, last, tiedOutput_ ? trgTable : nullptr, trgVocab_));
  }

private:
  Expr drop(Expr x, float p) const { return training_ ? dropout(x, p) : x; }

  // Embeddings scaled by sqrt(dim) plus positions, then the embedding post-processing.
  Expr embedWithPositions(ExpressionGraph& g, Expr emb, const std::string& prefix) {
    int len = emb->shape()[1];
    Expr x = emb * std::sqrt(float(dim_)) + layers::positions(g, len, dim_);
    return process(g, prefix + "_emb", postEmb_, x, nullptr, "_pre");  // Marian pre-processes the embeddings
  }

  // Applies the ops of `ops` in order; 'a' adds `residual`; a norm is prefix_ln_scale<lnSuffix>.
  Expr process(ExpressionGraph& g, const std::string& prefix, const std::string& ops, Expr x, Expr residual,
               const std::string& lnSuffix = "") {
    for(char op : ops) {
      if(op == 'd')
        x = drop(x, dropout_);
      else if(op == 'a' && residual)
        x = x + residual;
      else if(op == 'n')
        x = layers::layerNorm(g, prefix, x, lnSuffix);
    }
    return x;
  }

  Expr projection(ExpressionGraph& g, const std::string& prefix, const std::string& which, Expr x) {
    Expr W = g.param(prefix + "_W" + which, {x->shape().back(), dim_}, inits::glorotUniform());
    Expr b = g.param(prefix + "_b" + which, {1, dim_}, inits::zeros());
    return affine(x, W, b);
  }

  // [B, T, dim] -> [B, heads, T, dim/heads]
  Expr splitHeads(Expr x) const {
    int B = x->shape()[0], T = x->shape()[1];
    return transpose(reshape(x, {B, T, heads_, dim_ / heads_}), {0, 2, 1, 3});
  }
  Expr joinHeads(Expr x) const {
    int B = x->shape()[0], T = x->shape()[2];
    return reshape(transpose(x, {0, 2, 1, 3}), {B, T, dim_});
  }

  // Multi-head attention of queries q over keys/values kv; mask broadcasts onto [B, H, Tq, Tk].
  Expr attention(ExpressionGraph& g, const std::string& prefix, Expr q, Expr kv, Expr mask) {
    Expr Q = splitHeads(projection(g, prefix, "q", q));
    Expr K = splitHeads(projection(g, prefix, "k", kv));
    Expr V = splitHeads(projection(g, prefix, "v", kv));
    float scale = 1.f / std::sqrt(float(dim_ / heads_));
    Expr weights = softmax(maskFill(bdot(Q, K, false, true, scale), mask));
    Expr context = joinHeads(bdot(drop(weights, dropoutAtt_), V));
    return projection(g, prefix, "o", context);
  }

  Expr attentionBlock(ExpressionGraph& g, const std::string& prefix, Expr x, Expr memory, Expr mask) {
    Expr in = process(g, prefix + "_Wo", pre_, x, nullptr, "_pre");
    Expr out = attention(g, prefix, in, memory ? memory : in, mask);
    return process(g, prefix + "_Wo", post_, out, x);
  }

  // Marian's LayerFFN: depth dense layers (activation and dropout between them), named
  // encoder_l1_ffn_W1/_b1 ... _W<depth>/_b<depth>, norms encoder_l1_ffn_ffn_ln_*
  Expr ffnBlock(ExpressionGraph& g, const std::string& prefix, Expr x, int inner, int depth) {
    std::string ffn = prefix + "_ffn";
    Expr h = process(g, ffn + "_ffn", pre_, x, nullptr, "_pre");
    for(int i = 1; i < depth; ++i) {
      h = layers::dense(g, ffn, h, inner, true, std::to_string(i));
      h = drop(activation_ == "relu" ? relu(h) : activation_ == "gelu" ? gelu(h) : swish(h), dropoutFfn_);
    }
    Expr out = layers::dense(g, ffn, h, dim_, true, std::to_string(depth));
    return process(g, ffn + "_ffn", post_, out, x);
  }

  // --transformer-postprocess-top after the last layer (Marian: postProcess of prefix_top; 'n'
  // is the final norm pre-norm transformers need, encoder_top_ln_scale)
  Expr top(ExpressionGraph& g, const std::string& prefix, Expr x) { return process(g, prefix + "_top", postTop_, x, nullptr); }

  Expr encode(ExpressionGraph& g, Expr table, const Batch& batch, Expr srcMask) {
    Expr x = embedWithPositions(g, layers::embed(g, table, batch.srcIds, batch.sentences, batch.srcLen), "encoder");
    for(int l = 1; l <= encDepth_; ++l) {
      std::string prefix = "encoder_l" + std::to_string(l);
      x = attentionBlock(g, prefix + "_self", x, nullptr, srcMask);
      x = ffnBlock(g, prefix, x, ffn_, ffnDepth_);
    }
    return top(g, "encoder", x);
  }

  Expr decode(ExpressionGraph& g, Expr table, const Batch& batch, Expr enc, Expr srcMask) {
    int T = batch.trgLen;
    Expr emb = layers::shiftRight(g, layers::embed(g, table, batch.trgIds, batch.sentences, T));
    Expr x = embedWithPositions(g, emb, "decoder");
    std::vector<float> causal(size_t(T) * T);
    for(int i = 0; i < T; ++i)
      for(int j = 0; j <= i; ++j)
        causal[size_t(i) * T + j] = 1.f;
    Expr selfMask = g.constant({1, 1, T, T}, std::move(causal));
    for(int l = 1; l <= decDepth_; ++l) {
      // --transformer-tied-layers: decoder layer l takes the parameters of layer tied[l-1]
      std::string prefix = "decoder_l" + std::to_string(tiedLayers_.empty() ? l : tiedLayers_[size_t(l - 1)]);
      x = attentionBlock(g, prefix + "_self", x, nullptr, selfMask);
      x = attentionBlock(g, prefix + "_context", x, enc, srcMask);
      x = ffnBlock(g, prefix, x, decFfn_, decFfnDepth_);
    }
    return top(g, "decoder", x);
  }

  int srcVocab_, trgVocab_, dim_, heads_, ffn_, ffnDepth_, decFfn_, decFfnDepth_;
  std::vector<int> tiedLayers_;
  int encDepth_, decDepth_;
  std::string activation_, pre_, post_, postEmb_, postTop_;
  float dropout_, dropoutAtt_, dropoutFfn_, smoothing_;
  bool tiedOutput_, tiedSrc_;
  bool training_ = false;
};

}  // namespace

std::unique_ptr<EncoderDecoder> createTransformer(const Options& o, size_t srcVocab, size_t trgVocab) {
  return std::make_unique<Transformer>(o, srcVocab, trgVocab);
}

}  // namespace marian
