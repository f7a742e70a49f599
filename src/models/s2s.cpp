// Marian v1.12's s2s, `--type s2s`: a bi-directional GRU encoder and a conditional GRU decoder
// (GRU, additive attention, GRU) with a deep output layer, with Marian's parameter names, shapes
// and layouts and Marian's function, so that Marian decodes an s2s model trained here and this
// program decodes Marian's. From marian-dev (v1.12.0): models/s2s.h (EncoderS2S::applyEncoderRNN,
// DecoderS2S::startState, constructDecoderRNN and step), rnn/cells.h (GRU and its gruOps kernel),
// rnn/attention.h (GlobalAttention), layers/generic.h (mlp::Dense), layers/output.cpp
// (mlp::Output) and layers/embedding.cpp (word dropout).
//
// Supported: --enc-type bidirectional, --enc-cell gru, --dec-cell gru, --enc-cell-depth 1,
// --dec-cell-base-depth 2, --dec-cell-high-depth 1, --dec-depth 1, no --skip (other values are
// an error naming the option), any --enc-depth, --layer-normalization, the three tied-embeddings
// options, --dropout-rnn/-src/-trg and label smoothing.
//
// The parameters (E = dim-emb, H = dim-rnn, C = 2H, the context):
//   encoder_Wemb [Vs, E], decoder_Wemb [Vt, E] (one Wemb with --tied-embeddings-src/-all)
//   GRU <p>: <p>_U [H, 2H], _Ux [H, H], _W [in, 2H], _Wx [in, H], _b [1, 2H], _bx [1, H]; with
//     layer normalisation _gamma1 and _gamma2 [1, 3H] (no betas). Columns [0, H) of W, U and b
//     are the reset gate, [H, 2H) the update gate; Wx, Ux and bx the candidate. The encoder's
//     GRUs: encoder_bi (forward) and encoder_bi_r (backward) over the embeddings, then for layer
//     l > 1 encoder_bi_l<l>_cell1 and encoder_bi_r_l<l>_cell1 over the layer below in the same
//     direction (two separate stacks; only the top states are concatenated). The decoder's:
//     decoder_cell1 (input E) and decoder_cell2 (input C, Marian's "final" cell).
//   decoder_ff_state_W [C, H], _b [1, H] (+ _gamma [1, H]): the start state
//   decoder_W_comb_att [H, C], decoder_Wc_att [C, C], decoder_U_att [C, 1], decoder_b_att
//     [1, C] (+ decoder_att_gamma1, decoder_att_gamma2 [1, C]): attention in C units
//   decoder_ff_logit_l1_W0 [E, E], _W1 [H, E], _W2 [C, E], _b0.._b2 [1, E] (+ _gamma0.._gamma2
//     [1, E]): the deep output over (previous word, state, context)
//   decoder_ff_logit_l2_Wt [Vt, E] (untied; tied: the target embeddings), decoder_ff_logit_l2_b
//     [1, Vt]
// Every layer normalisation is Marian's layerNorm with its default eps 1e-9 inside the square
// root; a Dense's bias is the beta of its layer normalisation.
//
// Tensors here are batch-major ([sentences, time, dim]) where Marian's are time-major; the
// values are the same.
#include "models/embedding_ties.h"
#include "models/encoder_decoder.h"
#include "models/layers.h"

namespace marian {

namespace {

constexpr float kLayerNormEps = 1e-9f;  // Marian's layerNorm default, which every s2s norm uses

// One GRU (Marian's rnn::GRU): the concatenated [W | Wx], [U | Ux], [b | bx], the layer norms'
// gains and the dropout masks of its input and state.
struct Gru {
  Expr W, U, b, gamma1, gamma2, dropX, dropS;
  int dim = 0;
  bool final = false;  // Marian's "final" flag: bx inside the reset gate's product
};

class S2S : public EncoderDecoder {
public:
  S2S(const Options& o, size_t srcVocab, size_t trgVocab)
      : srcVocab_(int(srcVocab)), trgVocab_(int(trgVocab)),
        dimEmb_(o.get<int>("dim-emb")), dimRnn_(o.get<int>("dim-rnn")),
        encDepth_(o.get<int>("enc-depth")),
        layerNorm_(o.get<bool>("layer-normalization")),
        dropoutRnn_(o.get<float>("dropout-rnn")), dropoutSrc_(o.get<float>("dropout-src")),
        dropoutTrg_(o.get<float>("dropout-trg")), smoothing_(o.get<float>("label-smoothing")),
        ties_(EmbeddingTies::fromOptions(o, srcVocab, trgVocab)) {
    auto only = [](const char* option, const std::string& value, const char* supported) {
      ABORT_IF(value != supported,
               "--type s2s supports --{} {} only (Marian's other s2s variants are not implemented), not {}", option,
               supported, value);
    };
    only("enc-type", o.get<std::string>("enc-type"), "bidirectional");
    only("enc-cell", o.get<std::string>("enc-cell"), "gru");
    only("dec-cell", o.get<std::string>("dec-cell"), "gru");
    only("enc-cell-depth", std::to_string(o.get<int>("enc-cell-depth")), "1");
    only("dec-cell-base-depth", std::to_string(o.get<int>("dec-cell-base-depth")), "2");
    only("dec-cell-high-depth", std::to_string(o.get<int>("dec-cell-high-depth")), "1");
    only("dec-depth", std::to_string(o.get<int>("dec-depth")), "1");
    only("skip", o.get<bool>("skip") ? "true" : "false", "false");
    ABORT_IF(encDepth_ < 1, "--enc-depth must be at least 1, not {}", encDepth_);
  }


  // Marian's creation order (models/encoder_decoder.cpp stepAll): the encoder, the start state,
  // the target embeddings, the decoder RNN, the deep output and the output layer.
  Expr labelCrossEntropies(ExpressionGraph& g, const Batch& batch, bool training) override {
    training_ = training;
    Expr context = encode(g, batch);
    Decoded d = decode(g, batch, context, alignmentWanted_ || (training && !batch.guidedAlignment.empty()));
    alignment_ = d.attention.empty() ? nullptr : concat(d.attention, 2);  // [B, 1, Tt, Ts]
    Expr hidden = deepOutput(g, d.prevWords, stack(d.states), stack(d.contexts));
    return layers::labelCrossEntropies(g, hidden, ties_.output ? d.trgTable : nullptr, trgVocab_, batch,
                                       training ? smoothing_ : 0.f, "decoder_ff_logit_l2");
  }

  // The state: the source mask, the context, the attention's mapped context (computed once) and
  // the decoder's recurrent state s ("srcMask", "context", "mappedContext", "s").
  void startDecoding(ExpressionGraph& g, const Batch& sources, DecoderState& state) override {
    training_ = false;
    Expr context = encode(g, sources);
    Expr srcMask = g.constant({sources.sentences, sources.srcLen}, sources.srcMask);
    Attention att = attention(g, context);
    state.set("srcMask", srcMask);
    state.set("context", context);
    state.set("mappedContext", att.mappedContext);
    state.set("s", startState(g, context, sources));
  }

  Expr decodeStep(ExpressionGraph& g, const DecodingStep& step, DecoderState& state) override {
    training_ = false;
    int rows = state.rows();
    Expr trgTable = layers::embeddingTable(g, ties_.source ? "Wemb" : "decoder_Wemb", trgVocab_, dimEmb_);
    // the previous word's embedding; a zero vector before the first word (shiftRight in training)
    Expr y = step.position == 0 ? g.constant({rows, dimEmb_}, std::vector<float>(size_t(rows) * dimEmb_, 0.f))
                                : reshape(layers::embed(g, trgTable, step.lastWords, rows, 1), {rows, dimEmb_});
    Expr context = state.get(g, "context");
    Attention att = attention(g, context, state.get(g, "mappedContext"));
    Gru cell1 = gru(g, "decoder_cell1", dimEmb_, false), cell2 = gru(g, "decoder_cell2", context->shape().back(), true);
    Cond next = conditionalGru(cell1, cell2, att, gruInput(cell1, y), state.get(g, "s"), context, state.get(g, "srcMask"));
    state.set("s", next.s);
    alignment_ = alignmentWanted_ ? next.weights : nullptr;  // [rows, Ts]
    Expr hidden = deepOutput(g, y, next.s, next.c);
    return logSoftmax(
        layers::outputLayer(g, hidden, ties_.output ? trgTable : nullptr, trgVocab_, "decoder_ff_logit_l2"));
  }

private:
  // --- Marian's building blocks ------------------------------------------------------------------

  // A dropout mask [1, dim] (Marian's graph->dropoutMask in rnn::GRU and GlobalAttention): the
  // same units dropped at every time step and in every sentence of the batch; null in inference.
  Expr dropMask(ExpressionGraph& g, int dim) const {
    if(!training_ || dropoutRnn_ == 0.f)
      return nullptr;
    return dropoutMask(g, {1, dim}, dropoutRnn_);
  }
  static Expr masked(Expr x, Expr mask) { return mask ? x * mask : x; }

  // Embeddings [B, T, E] with Marian's word dropout (layers/embedding.cpp): one value per time
  // position, shared by all sentences of the batch (mask [T, 1, 1] time-major).
  Expr embedWords(ExpressionGraph& g, Expr table, const std::vector<int>& ids, int sentences, int len,
                  float p) const {
    Expr emb = layers::embed(g, table, ids, sentences, len);
    return training_ && p > 0.f ? dropout(emb, p, Shape({1, len, 1})) : emb;
  }

  // mlp::Dense with one of several inputs (suffix num: "" for one input, "0", "1", ... for
  // several): x W + b, or with layer normalisation LN(x W; gamma, beta = b); the activation is
  // the caller's (Marian's tanh over the sum of the inputs' terms).
  Expr dense(ExpressionGraph& g, const std::string& prefix, Expr x, int out, const std::string& num) const {
    Expr W = g.param(prefix + "_W" + num, {x->shape().back(), out}, inits::glorotUniform());
    Expr b = g.param(prefix + "_b" + num, {1, out}, inits::zeros());
    if(!layerNorm_)
      return affine(x, W, b);
    Expr gamma = g.param(prefix + "_gamma" + num, {1, out}, inits::ones());
    return layerNorm(dot(x, W), gamma, b, kLayerNormEps);
  }

  // rnn::GRU's parameters (in its order of creation) and dropout masks; dimInput > 0.
  Gru gru(ExpressionGraph& g, const std::string& prefix, int dimInput, bool final) const {
    int H = dimRnn_;
    Gru c;
    c.dim = H;
    c.final = final;
    Expr U = g.param(prefix + "_U", {H, 2 * H}, inits::glorotUniform());
    Expr Ux = g.param(prefix + "_Ux", {H, H}, inits::glorotUniform());
    c.U = concat({U, Ux}, -1);
    Expr W = g.param(prefix + "_W", {dimInput, 2 * H}, inits::glorotUniform());
    Expr Wx = g.param(prefix + "_Wx", {dimInput, H}, inits::glorotUniform());
    c.W = concat({W, Wx}, -1);
    Expr b = g.param(prefix + "_b", {1, 2 * H}, inits::zeros());
    Expr bx = g.param(prefix + "_bx", {1, H}, inits::zeros());
    c.b = concat({b, bx}, -1);
    c.dropX = dropMask(g, dimInput);
    c.dropS = dropMask(g, H);
    if(layerNorm_) {
      c.gamma1 = g.param(prefix + "_gamma1", {1, 3 * H}, inits::ones());
      c.gamma2 = g.param(prefix + "_gamma2", {1, 3 * H}, inits::ones());
    }
    return c;
  }

  // GRU::applyInput: x [.., in] -> x [W | Wx] [.., 3H], layer-normalised over all 3H columns;
  // for a non-final cell the bias is added here, once for the whole sequence.
  Expr gruInput(const Gru& c, Expr x) const {
    Expr xW = dot(masked(x, c.dropX), c.W);
    if(layerNorm_)
      xW = layerNorm(xW, c.gamma1, nullptr, kLayerNormEps);
    return c.final ? xW : xW + c.b;
  }

  // GRU::applyState and gruOps: from xW [B, 3H] and the state h [B, H],
  //   r = sigmoid(xW_r + sU_r + b_r), z = sigmoid(xW_z + sU_z + b_z)
  //   candidate = tanh(xW_x + r * sU_x + bx)       (final: tanh(xW_x + r * (sU_x + bx)))
  //   h' = (1 - z) * candidate + z * h, kept at h where mask [B, 1] is 0,
  // with sU = (dropped h) [U | Ux], layer-normalised over all 3H columns; the interpolation uses
  // the undropped h.
  Expr gruStep(const Gru& c, Expr xW, Expr h, Expr mask) const {
    int H = c.dim;
    Expr sU = dot(masked(h, c.dropS), c.U);
    if(layerNorm_)
      sU = layerNorm(sU, c.gamma2, nullptr, kLayerNormEps);
    if(c.final)
      sU = sU + c.b;
    Expr gates = sigmoid(slice(xW, -1, 0, 2 * H) + slice(sU, -1, 0, 2 * H));
    Expr r = slice(gates, -1, 0, H), z = slice(gates, -1, H, 2 * H);
    Expr candidate = tanh(slice(xW, -1, 2 * H, 3 * H) + r * slice(sU, -1, 2 * H, 3 * H));
    Expr next = candidate + z * (h - candidate);
    return mask ? h + mask * (next - h) : next;
  }

  static Expr step(Expr seq, int t) {  // [B, T, D] -> [B, D] at time t
    return reshape(slice(seq, 1, t, t + 1), {seq->shape()[0], seq->shape()[2]});
  }
  static Expr stack(const std::vector<Expr>& states) {  // T x [B, D] -> [B, T, D]
    std::vector<Expr> cols;
    for(Expr s : states)
      cols.push_back(reshape(s, {s->shape()[0], 1, s->shape()[1]}));
    return concat(cols, 1);
  }

  // rnn::SingleLayerRNN::apply: the GRU over a sequence x [B, T, in], forward or backward, from a
  // zero state; a padded position keeps the state. Returns the states [B, T, H] in time order.
  Expr rnn(ExpressionGraph& g, const Gru& cell, Expr x, const Batch& batch, bool reverse) const {
    int B = batch.sentences, T = batch.srcLen;
    Expr xW = gruInput(cell, x);
    Expr h = g.constant({B, cell.dim}, std::vector<float>(size_t(B) * cell.dim, 0.f));
    std::vector<Expr> states(T);
    for(int i = 0; i < T; ++i) {
      int t = reverse ? T - 1 - i : i;
      std::vector<float> m(B);
      for(int b = 0; b < B; ++b)
        m[b] = batch.srcMask[size_t(b) * T + t];
      h = gruStep(cell, step(xW, t), h, g.constant({B, 1}, std::move(m)));
      states[t] = h;
    }
    return stack(states);
  }

  // --- the model -------------------------------------------------------------------------------

  // EncoderS2S::applyEncoderRNN, --enc-type bidirectional: two separate stacks of --enc-depth
  // GRUs over the embeddings, forward (encoder_bi, encoder_bi_l2_cell1, ...) and backward
  // (encoder_bi_r, encoder_bi_r_l2_cell1, ...), each layer over the states of the one below in
  // the same direction; their top states concatenated: the context [B, T, 2H].
  Expr encode(ExpressionGraph& g, const Batch& batch) {
    Expr table = layers::embeddingTable(g, ties_.source ? "Wemb" : "encoder_Wemb", srcVocab_, dimEmb_);
    Expr emb = embedWords(g, table, batch.srcIds, batch.sentences, batch.srcLen, dropoutSrc_);
    auto direction = [&](const std::string& prefix, bool reverse) {
      std::vector<Gru> cells;  // Marian constructs a stack's cells, then runs them
      for(int l = 1; l <= encDepth_; ++l)
        cells.push_back(gru(g, l == 1 ? prefix : prefix + "_l" + std::to_string(l) + "_cell1",
                            l == 1 ? dimEmb_ : dimRnn_, false));
      Expr x = emb;
      for(const Gru& cell : cells)
        x = rnn(g, cell, x, batch, reverse);
      return x;
    };
    Expr forward = direction("encoder_bi", false);
    Expr backward = direction("encoder_bi_r", true);
    return concat({forward, backward}, -1);
  }

  struct Decoded {
    Expr trgTable;                // the target embeddings
    Expr prevWords;               // the previous words' embeddings [B, Tt, E] (zeros first)
    std::vector<Expr> states;     // the decoder states s_t, Tt x [B, H]
    std::vector<Expr> contexts;   // the attention contexts c_t, Tt x [B, C]
    std::vector<Expr> attention;  // when aligned, the attention weights, Tt x [B, 1, 1, Ts]
  };

  // DecoderS2S::startState: tanh(Dense decoder_ff_state(the mean of the context over real words))
  Expr startState(ExpressionGraph& g, Expr context, const Batch& batch) const {
    int B = batch.sentences, Ts = batch.srcLen, C = context->shape().back();
    std::vector<float> inverseLength(B);
    for(int b = 0; b < B; ++b) {
      float n = 0;
      for(int t = 0; t < Ts; ++t)
        n += batch.srcMask[size_t(b) * Ts + t];
      inverseLength[b] = 1.f / n;
    }
    Expr srcMask = g.constant({B, Ts, 1}, batch.srcMask);
    Expr meanContext = reshape(sum(context * srcMask, 1), {B, C}) * g.constant({B, 1}, std::move(inverseLength));
    return tanh(dense(g, "decoder_ff_state", meanContext, dimRnn_, ""));
  }

  // GlobalAttention's parameters and the context mapped once: Wc_att c + b_att [B, Ts, C] (given
  // when decoding has kept it)
  struct Attention {
    Expr Wa, va, gammaState, dropState, mappedContext;
  };
  Attention attention(ExpressionGraph& g, Expr context, Expr mappedContext = nullptr) const {
    int C = context->shape().back();
    Attention a;
    a.Wa = g.param("decoder_W_comb_att", {dimRnn_, C}, inits::glorotUniform());
    Expr Ua = g.param("decoder_Wc_att", {C, C}, inits::glorotUniform());
    a.va = g.param("decoder_U_att", {C, 1}, inits::glorotUniform());
    Expr ba = g.param("decoder_b_att", {1, C}, inits::zeros());
    Expr dropContext = dropMask(g, C);
    a.dropState = dropMask(g, dimRnn_);
    Expr gammaContext;
    if(layerNorm_) {
      gammaContext = g.param("decoder_att_gamma1", {1, C}, inits::ones());
      a.gammaState = g.param("decoder_att_gamma2", {1, C}, inits::ones());
    }
    if(mappedContext)
      a.mappedContext = mappedContext;
    else if(layerNorm_)
      a.mappedContext = layerNorm(dot(masked(context, dropContext), Ua), gammaContext, ba, kLayerNormEps);
    else
      a.mappedContext = affine(masked(context, dropContext), Ua, ba);
    return a;
  }

  // One step of the conditional GRU (constructDecoderRNN), from x1 = the previous word's input
  // to decoder_cell1 (gruInput) [B, 3H] and the previous state s [B, H]:
  //   h1 = GRU decoder_cell1(y, s)
  //   c  = attention over the context with h1 (GlobalAttention): e = U_att^T tanh(mapped
  //        context + W_comb_att h1), softmax over the real source words (srcMask [B, Ts]),
  //        c the weighted sum of the undropped context
  //   s' = GRU decoder_cell2(c, h1), a final cell
  struct Cond {
    Expr s, c;
    Expr weights;  // the attention weights [B, Ts]
  };
  Cond conditionalGru(const Gru& cell1, const Gru& cell2, const Attention& att, Expr x1, Expr s, Expr context,
                      Expr srcMask) const {
    int B = context->shape()[0], Ts = context->shape()[1], C = context->shape()[2];
    Expr h1 = gruStep(cell1, x1, s, nullptr);
    Expr query = dot(masked(h1, att.dropState), att.Wa);
    if(layerNorm_)
      query = layerNorm(query, att.gammaState, nullptr, kLayerNormEps);
    Expr energies = reshape(dot(tanh(att.mappedContext + reshape(query, {B, 1, C})), att.va), {B, Ts});
    Expr weights = softmax(maskFill(energies, srcMask));
    Expr c = reshape(bdot(reshape(weights, {B, 1, Ts}), context), {B, C});
    return {gruStep(cell2, gruInput(cell2, c), h1, nullptr), c, weights};
  }

  // The whole target at once (training): DecoderS2S::startState and the conditional GRU over
  // every target position.
  Decoded decode(ExpressionGraph& g, const Batch& batch, Expr context, bool aligned) {
    int B = batch.sentences, Ts = batch.srcLen, Tt = batch.trgLen;
    Expr s = startState(g, context, batch);
    Decoded d;
    // models/decoder.h embeddingsFromBatch: the embeddings (word dropout) shifted right, a zero
    // vector first
    d.trgTable = layers::embeddingTable(g, ties_.source ? "Wemb" : "decoder_Wemb", trgVocab_, dimEmb_);
    d.prevWords =
        layers::shiftRight(g, embedWords(g, d.trgTable, batch.trgIds, B, Tt, dropoutTrg_));
    Gru cell1 = gru(g, "decoder_cell1", dimEmb_, false);
    Attention att = attention(g, context);
    Gru cell2 = gru(g, "decoder_cell2", context->shape().back(), true);
    Expr srcMask = g.constant({B, Ts}, batch.srcMask);
    Expr x1 = gruInput(cell1, d.prevWords);  // [B, Tt, 3H], for all positions at once
    for(int t = 0; t < Tt; ++t) {
      Cond next = conditionalGru(cell1, cell2, att, step(x1, t), s, context, srcMask);
      s = next.s;
      d.states.push_back(next.s);
      d.contexts.push_back(next.c);
      if(aligned)
        d.attention.push_back(reshape(next.weights, {B, 1, 1, Ts}));
    }
    return d;
  }

  // DecoderS2S::step's deep output decoder_ff_logit_l1: tanh of the Dense terms of the previous
  // word (W0), the state (W1) and the context (W2); the output layer decoder_ff_logit_l2 follows.
  Expr deepOutput(ExpressionGraph& g, Expr prevWords, Expr states, Expr contexts) const {
    Expr terms = dense(g, "decoder_ff_logit_l1", prevWords, dimEmb_, "0");
    terms = terms + dense(g, "decoder_ff_logit_l1", states, dimEmb_, "1");
    terms = terms + dense(g, "decoder_ff_logit_l1", contexts, dimEmb_, "2");
    return tanh(terms);
  }

  int srcVocab_, trgVocab_, dimEmb_, dimRnn_, encDepth_;
  bool layerNorm_;
  float dropoutRnn_, dropoutSrc_, dropoutTrg_, smoothing_;
  EmbeddingTies ties_;
  bool training_ = false;
};

}  // namespace

std::unique_ptr<EncoderDecoder> createS2S(const Options& o, size_t srcVocab, size_t trgVocab) {
  return std::make_unique<S2S>(o, srcVocab, trgVocab);
}

}  // namespace marian
