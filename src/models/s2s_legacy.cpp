// The s2s model of earlier versions of this program, before s2s took Marian v1.12's parameter
// names, layout and function (models/s2s.cpp): kept unchanged so that their model files still
// decode. Translator::load chooses it for a model file that holds this layout's names
// (decoder_att_keys_W, decoder_att_U, decoder_att_v, decoder_cell1_W_W, decoder_ff_logit_l1_rnn_W,
// ...; isEarlierS2SModel in models/legacy_names.h). It is for decoding only: training always
// builds models/s2s.cpp, and a checkpoint of this layout does not resume (its parameter layout
// fingerprint differs). Its loss() stays because the translator declares a model's parameters
// through it.
//
// The earlier model: a bi-directional GRU encoder (encoder_bi, encoder_bi_r; deeper layers
// forward GRUs encoder_l<N> over the context with residuals) and a conditional GRU decoder (GRU,
// additive attention in dim-rnn units, GRU) with a deep output layer.
#include "models/encoder_decoder.h"
#include "models/layers.h"

namespace marian {

namespace {

class EarlierS2S : public EncoderDecoder {
public:
  EarlierS2S(const Options& o, size_t srcVocab, size_t trgVocab)
      : srcVocab_(int(srcVocab)), trgVocab_(int(trgVocab)),
        dimEmb_(o.get<int>("dim-emb")), dimRnn_(o.get<int>("dim-rnn")),
        encDepth_(o.get<int>("enc-depth")),
        layerNorm_(o.get<bool>("layer-normalization")),
        dropoutRnn_(o.get<float>("dropout-rnn")), dropoutSrc_(o.get<float>("dropout-src")),
        dropoutTrg_(o.get<float>("dropout-trg")), smoothing_(o.get<float>("label-smoothing")),
        tiedOutput_(o.get<bool>("tied-embeddings") || o.get<bool>("tied-embeddings-all")),
        tiedSrc_(o.get<bool>("tied-embeddings-src") || o.get<bool>("tied-embeddings-all")) {
    ABORT_IF(o.get<int>("dec-depth") != 1, "s2s supports --dec-depth 1 (a conditional GRU), not {}",
             o.get<int>("dec-depth"));
    ABORT_IF(o.get<std::string>("enc-cell") != "gru" || o.get<std::string>("dec-cell") != "gru",
             "s2s supports GRU cells only (--enc-cell gru --dec-cell gru)");
    ABORT_IF(tiedSrc_ && srcVocab != trgVocab,
             "--tied-embeddings-all/--tied-embeddings-src need one vocabulary size, got {} and {}",
             srcVocab, trgVocab);
  }

  std::string type() const override { return "s2s"; }

  Expr loss(ExpressionGraph& g, const Batch& batch, bool training) override {
    training_ = training;
    Expr srcTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "encoder_Wemb", srcVocab_, dimEmb_);
    Expr trgTable = tiedSrc_ ? srcTable : layers::embeddingTable(g, "decoder_Wemb", trgVocab_, dimEmb_);
    Expr context = encode(g, srcTable, batch);
    Expr hidden = decode(g, trgTable, batch, context);
    return layers::summedCrossEntropy(g, hidden, tiedOutput_ ? trgTable : nullptr, trgVocab_, batch,
                                      training ? smoothing_ : 0.f);
  }

  // Decoding as that version did it: the context kept, the GRUs run over each row's whole prefix
  // again at every step (this model is only decoded, so it is not worth a cache).
  void startDecoding(ExpressionGraph& g, const Batch& sources, DecoderState& state) override {
    training_ = false;
    Expr srcTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "encoder_Wemb", srcVocab_, dimEmb_);
    state.set("context", encode(g, srcTable, sources));
  }

  Expr decodeStep(ExpressionGraph& g, const DecodingStep& step, DecoderState& state) override {
    training_ = false;
    // one row per hypothesis: its source's mask, its words so far followed by one ignored id
    const Batch& src = *step.sources;
    int rows = state.rows(), S = src.srcLen, t = step.position;
    Batch prefix;
    prefix.sentences = rows;
    prefix.srcLen = S;
    prefix.trgLen = t + 1;
    prefix.trgIds.assign(size_t(rows) * (t + 1), 0);
    prefix.trgMask.assign(size_t(rows) * (t + 1), 1.f);
    for(int r = 0; r < rows; ++r) {
      size_t s = size_t((*step.sentences)[size_t(r)]);
      prefix.srcMask.insert(prefix.srcMask.end(), src.srcMask.begin() + long(s * S), src.srcMask.begin() + long((s + 1) * S));
      std::copy(step.prefixes[size_t(r)]->begin(), step.prefixes[size_t(r)]->end(),
                prefix.trgIds.begin() + long(size_t(r) * (t + 1)));
    }
    Expr trgTable = layers::embeddingTable(g, tiedSrc_ ? "Wemb" : "decoder_Wemb", trgVocab_, dimEmb_);
    Expr hidden = decode(g, trgTable, prefix, state.get(g, "context"));
    Expr last = reshape(slice(hidden, 1, t, t + 1), {rows, dimEmb_});
    return logSoftmax(layers::outputLayer(g, last, tiedOutput_ ? trgTable : nullptr, trgVocab_));
  }

private:
  Expr drop(Expr x, float p) const { return training_ ? dropout(x, p) : x; }
  Expr dropWords(Expr emb, float p) const {  // whole words: one mask value per position
    return training_ ? dropout(emb, p, emb->shape().with(-1, 1)) : emb;
  }

  // Input projections of a whole sequence for a GRU: [B, T, 3H]
  Expr inputProjection(ExpressionGraph& g, const std::string& prefix, Expr x, int dim) {
    Expr proj = layers::dense(g, prefix + "_W", x, 3 * dim);
    return layerNorm_ ? layers::layerNorm(g, prefix + "_W", proj) : proj;
  }

  // One GRU step: r, z gates and candidate from the input projection xp [B, 3H] and state h.
  // h' = z * h + (1 - z) * tanh(x_h + r * (U_h h)), kept at h where mask [B, 1] is 0.
  Expr gruStep(ExpressionGraph& g, const std::string& prefix, Expr xp, Expr h, Expr mask) {
    int H = h->shape().back();
    Expr U = g.param(prefix + "_U", {H, 3 * H}, inits::glorotUniform());
    Expr hu = dot(drop(h, dropoutRnn_), U);
    if(layerNorm_)
      hu = layers::layerNorm(g, prefix + "_U", hu);
    Expr r = sigmoid(slice(xp, -1, 0, H) + slice(hu, -1, 0, H));
    Expr z = sigmoid(slice(xp, -1, H, 2 * H) + slice(hu, -1, H, 2 * H));
    Expr candidate = tanh(slice(xp, -1, 2 * H, 3 * H) + r * slice(hu, -1, 2 * H, 3 * H));
    Expr next = candidate + z * (h - candidate);
    return mask ? h + mask * (next - h) : next;
  }

  Expr step(Expr seq, int t) const {  // [B, T, D] -> [B, D] at time t
    return reshape(slice(seq, 1, t, t + 1), {seq->shape()[0], seq->shape()[2]});
  }
  Expr stack(const std::vector<Expr>& states) const {  // T x [B, D] -> [B, T, D]
    std::vector<Expr> cols;
    for(Expr s : states)
      cols.push_back(reshape(s, {s->shape()[0], 1, s->shape()[1]}));
    return concat(cols, 1);
  }

  // A GRU over a sequence, forward or backward; returns the states [B, T, H] in time order.
  Expr rnn(ExpressionGraph& g, const std::string& prefix, Expr x, int dim, const Batch& batch, bool reverse) {
    int B = batch.sentences, T = batch.srcLen;
    Expr xp = inputProjection(g, prefix, x, dim);
    Expr h = g.constant({B, dim}, std::vector<float>(size_t(B) * dim, 0.f));
    std::vector<Expr> states(T);
    for(int i = 0; i < T; ++i) {
      int t = reverse ? T - 1 - i : i;
      std::vector<float> m(B);
      for(int b = 0; b < B; ++b)
        m[b] = batch.srcMask[size_t(b) * T + t];
      h = gruStep(g, prefix, step(xp, t), h, g.constant({B, 1}, std::move(m)));
      states[t] = h;
    }
    return stack(states);
  }

  Expr encode(ExpressionGraph& g, Expr table, const Batch& batch) {
    Expr emb = dropWords(layers::embed(g, table, batch.srcIds, batch.sentences, batch.srcLen), dropoutSrc_);
    Expr context = concat({rnn(g, "encoder_bi", emb, dimRnn_, batch, false),
                           rnn(g, "encoder_bi_r", emb, dimRnn_, batch, true)}, -1);
    // deeper layers: forward GRUs over the context with residual connections
    for(int l = 2; l <= encDepth_; ++l)
      context = context + rnn(g, "encoder_l" + std::to_string(l), context, 2 * dimRnn_, batch, false);
    return context;
  }

  // the deep output's hidden states [B, Tt, dim-emb], before the output layer
  Expr decode(ExpressionGraph& g, Expr table, const Batch& batch, Expr context) {
    int B = batch.sentences, Ts = batch.srcLen, Tt = batch.trgLen, H = dimRnn_;
    int C = context->shape().back();
    Expr srcMask = g.constant({B, Ts}, batch.srcMask);

    // initial state from the mean of the context over real source words
    std::vector<float> inverseLength(B);
    for(int b = 0; b < B; ++b) {
      float n = 0;
      for(int t = 0; t < Ts; ++t)
        n += batch.srcMask[size_t(b) * Ts + t];
      inverseLength[b] = 1.f / n;
    }
    Expr masked = context * reshape(srcMask, {B, Ts, 1});
    Expr meanContext = reshape(sum(masked, 1), {B, C}) * g.constant({B, 1}, inverseLength);
    Expr s = tanh(layers::dense(g, "decoder_ff_state", drop(meanContext, dropoutRnn_), H));

    Expr yEmb = dropWords(layers::shiftRight(g, layers::embed(g, table, batch.trgIds, B, Tt)), dropoutTrg_);
    Expr x1 = inputProjection(g, "decoder_cell1", yEmb, H);
    // attention in dim-rnn units: tanh(keys + query) is [B, Ts, H] at every target step, the
    // largest activation of the model
    Expr keys = layers::dense(g, "decoder_att_keys", context, H);  // W_a ctx + b, once
    Expr Ua = g.param("decoder_att_U", {H, H}, inits::glorotUniform());
    Expr va = g.param("decoder_att_v", {H, 1}, inits::glorotUniform());

    std::vector<Expr> states, contexts;
    for(int t = 0; t < Tt; ++t) {
      Expr s1 = gruStep(g, "decoder_cell1", step(x1, t), s, nullptr);
      // additive attention: e = v^T tanh(W_a ctx + U_a s1), masked softmax over the source
      Expr query = reshape(dot(s1, Ua), {B, 1, H});
      Expr energies = reshape(dot(tanh(keys + query), va), {B, Ts});
      Expr weights = softmax(maskFill(energies, srcMask));
      Expr c = reshape(bdot(reshape(weights, {B, 1, Ts}), context), {B, C});
      s = gruStep(g, "decoder_cell2", inputProjection(g, "decoder_cell2", c, H), s1, nullptr);
      states.push_back(s);
      contexts.push_back(c);
    }
    // deep output: tanh(W_s s + W_y y_{t-1} + W_c c) -> logits
    Expr hidden = tanh(layers::dense(g, "decoder_ff_logit_l1_rnn", stack(states), dimEmb_) +
                       layers::dense(g, "decoder_ff_logit_l1_prev", yEmb, dimEmb_, false) +
                       layers::dense(g, "decoder_ff_logit_l1_ctx", stack(contexts), dimEmb_, false));
    return drop(hidden, dropoutRnn_);
  }

  int srcVocab_, trgVocab_, dimEmb_, dimRnn_, encDepth_;
  bool layerNorm_;
  float dropoutRnn_, dropoutSrc_, dropoutTrg_, smoothing_;
  bool tiedOutput_, tiedSrc_;
  bool training_ = false;
};

}  // namespace

std::unique_ptr<EncoderDecoder> createEarlierS2S(const Options& o, size_t srcVocab, size_t trgVocab) {
  return std::make_unique<EarlierS2S>(o, srcVocab, trgVocab);
}

}  // namespace marian
