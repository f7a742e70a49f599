// The transformer (Vaswani et al. 2017) with Marian's options: pre/post-processing sequences
// ("dan" = dropout, add residual, layer-norm), tied embeddings, sinusoidal positions, label
// smoothing and three kinds of dropout (as Marian's: the processing's and the FFN's masks shared
// by the sentences of a batch).
#include <algorithm>
#include <cmath>
#include <functional>

#include "models/embedding_ties.h"
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
        ffnDepth_(o.get<int>("transformer-ffn-depth")),
        // Marian's decoder values: 0 takes the encoder's
        decFfn_(o.get<int>("transformer-decoder-dim-ffn") ? o.get<int>("transformer-decoder-dim-ffn") : ffn_),
        decFfnDepth_(o.get<int>("transformer-decoder-ffn-depth") ? o.get<int>("transformer-decoder-ffn-depth")
                                                                    : ffnDepth_),
        tiedLayers_(o.get<std::vector<int>>("transformer-tied-layers")),
        encDepth_(o.get<int>("enc-depth")), decDepth_(o.get<int>("dec-depth")),
        activation_(o.get<std::string>("transformer-ffn-activation")),
        pre_(o.get<std::string>("transformer-preprocess")),
        post_(o.get<std::string>("transformer-postprocess")),
        postEmb_(o.get<std::string>("transformer-postprocess-emb")),
        postTop_(o.get<std::string>("transformer-postprocess-top")),
        dropout_(o.get<float>("transformer-dropout")),
        dropoutAtt_(o.get<float>("transformer-dropout-attention")),
        dropoutFfn_(o.get<float>("transformer-dropout-ffn")),
        dropoutSrc_(o.get<float>("dropout-src")), dropoutTrg_(o.get<float>("dropout-trg")),
        smoothing_(o.get<float>("label-smoothing")),
        ties_(EmbeddingTies::fromOptions(o, srcVocab, trgVocab)) {
    // Marian's --transformer-guided-alignment-layer: last, or a layer's number from 1
    std::string guided = o.get<std::string>("transformer-guided-alignment-layer", "last");
    ABORT_IF(guided != "last" && (guided.empty() || guided.size() > 6 || guided.find_first_not_of("0123456789") != std::string::npos),
             "--transformer-guided-alignment-layer '{}': last, or the number of a decoder layer (from 1)", guided);
    alignmentLayer_ = guided == "last" ? decDepth_ : std::stoi(guided);
    ABORT_IF(alignmentLayer_ < 1 || alignmentLayer_ > decDepth_,
             "--transformer-guided-alignment-layer {}: the decoder has layers 1 to {} (--dec-depth)", alignmentLayer_,
             decDepth_);
    ABORT_IF(dim_ % heads_ != 0, "--dim-emb {} is not divisible by --transformer-heads {}", dim_, heads_);
    ABORT_IF(!tiedLayers_.empty() && int(tiedLayers_.size()) != decDepth_,
             "--transformer-tied-layers names {} layers but the decoder has {} (--dec-depth): give one layer number "
             "per decoder layer",
             tiedLayers_.size(), decDepth_);
    for(const std::string* ops : {&pre_, &post_, &postEmb_, &postTop_})
      ABORT_IF(ops->find_first_not_of("dan") != std::string::npos,
               "Transformer processing '{}' may only use d (dropout), a (add), n (norm)", *ops);
    // as Marian's preProcess: nothing to add before a block or to the embeddings
    for(auto [option, ops] : {std::pair{"preprocess", &pre_}, std::pair{"postprocess-emb", &postEmb_}})
      ABORT_IF(ops->find('a') != std::string::npos,
               "--transformer-{} '{}': a (add) has no residual there (Marian refuses it too); use d and n", option,
               *ops);
  }


  Expr labelCrossEntropies(ExpressionGraph& g, const Batch& batch, bool training) override {
    training_ = training;
    Expr srcTable = layers::embeddingTable(g, ties_.source ? "Wemb" : "encoder_Wemb", srcVocab_, dim_);
    Expr trgTable = ties_.source ? srcTable : layers::embeddingTable(g, "decoder_Wemb", trgVocab_, dim_);

    Expr srcMask = g.constant({batch.sentences, 1, 1, batch.srcLen}, batch.srcMask);
    Encoded enc = encode(g, srcTable, batch, srcMask);
    Positions trg = positionsOnGraph(g, layers::realPositions(batch.trgMask, batch.sentences, batch.trgLen));
    alignment_ = nullptr;
    bool aligned = alignmentWanted_ || (training && !batch.guidedAlignment.empty());
    Expr dec = decode(g, trgTable, batch, trg, enc, srcMask, aligned ? &alignment_ : nullptr);
    return layers::crossEntropiesOfRows(g, dec, ties_.output ? trgTable : nullptr, trgVocab_,
                                        trg.real.pick(batch.trgIds), training ? smoothing_ : 0.f);
  }

  // The state: per source sentence, its mask and per decoder layer l the context attention's keys
  // and values of the encoder's states ("l<l>_context_k/_v", computed once, read by every
  // hypothesis of the sentence); per hypothesis, the self-attention's keys and values of the
  // positions decoded so far ("l<l>_self_k/_v", one position longer each step).
  void startDecoding(ExpressionGraph& g, const Batch& sources, DecoderState& state) override {
    training_ = false;
    Expr srcTable = layers::embeddingTable(g, ties_.source ? "Wemb" : "encoder_Wemb", srcVocab_, dim_);
    Expr srcMask = g.constant({sources.sentences, 1, 1, sources.srcLen}, sources.srcMask);
    Encoded enc = encode(g, srcTable, sources, srcMask);
    state.setPerSentence("srcMask", srcMask);
    for(int l = 1; l <= decDepth_; ++l) {
      KeysValues kv = keysValues(g, decoderPrefix(l) + "_context", enc.states, enc.positions);
      state.setPerSentence(cacheName(l, "context_k"), kv.K);
      state.setPerSentence(cacheName(l, "context_v"), kv.V);
    }
  }

  Expr decodeStep(ExpressionGraph& g, const DecodingStep& step, DecoderState& state) override {
    training_ = false;
    int rows = state.rows(), t = step.position;
    Expr trgTable = layers::embeddingTable(g, ties_.source ? "Wemb" : "decoder_Wemb", trgVocab_, dim_);
    // the previous word's embedding; a zero vector before the first word (as in training)
    Expr emb = t == 0 ? g.constant({rows, dim_}, std::vector<float>(size_t(rows) * dim_, 0.f))
                      : marian::rows(trgTable, g.indices(step.lastWords));
    Positions here = positionsOnGraph(g, layers::allPositions(rows, 1));
    StackInput in = embedWithPositions(g, emb, "decoder", std::vector<int>(size_t(rows), t), here);
    Expr x = in.x;
    Expr srcMask = state.get(g, "srcMask");
    ABORT_IF(!step.sentences || int(step.sentences->size()) != rows, "A decoding step needs the sentence of each of its {} rows",
             rows);
    // the context attention's queries by sentence: [sentences, heads, its hypotheses, d]
    Positions bySentence = positionsOnGraph(g, rowsBySentence(*step.sentences, srcMask->shape()[0]));
    Expr contextWeights;  // of the guided layer, [sentences, heads, hypotheses, srcLen], when wanted
    for(int l = 1; l <= decDepth_; ++l) {
      auto self = [&](Expr in) {  // the cached positions and this one
        KeysValues kv = keysValues(g, decoderPrefix(l) + "_self", in, here);
        if(t > 0) {
          kv.K = concat({state.get(g, cacheName(l, "self_k")), kv.K}, 2);
          kv.V = concat({state.get(g, cacheName(l, "self_v")), kv.V}, 2);
        }
        state.set(cacheName(l, "self_k"), kv.K);
        state.set(cacheName(l, "self_v"), kv.V);
        return kv;
      };
      auto context = [&](Expr) {
        return KeysValues{state.get(g, cacheName(l, "context_k")), state.get(g, cacheName(l, "context_v"))};
      };
      x = decoderLayer(g, l, x, here, self, nullptr, context, srcMask, &bySentence,  // one query: no causal mask
                       alignmentWanted_ && l == alignmentLayer_ ? &contextWeights : nullptr);
    }
    alignment_ = nullptr;
    if(contextWeights) {  // the first head's row of each hypothesis: [rows, srcLen]
      const Shape& w = contextWeights->shape();
      Expr head = reshape(slice(contextWeights, 1, 0, 1), {w[0] * w[2], w[3]});
      alignment_ = marian::rows(head, g.indices(bySentence.real.flat));
    }
    x = top(g, "decoder", x, here, in.bottom);
    return logSoftmax(layers::outputLayer(g, x, ties_.output ? trgTable : nullptr, trgVocab_));
  }

private:
  // Every layer but attention computes on the rows [rows, dim] of the real positions only;
  // attention takes them to heads of all positions and back through rowOf.
  struct Positions {
    layers::RealPositions real;
    Expr rowOf;
    Expr timeOf;  // real.times on the graph: the shared dropout masks' row of each row
  };
  static Positions positionsOnGraph(ExpressionGraph& g, layers::RealPositions real) {
    Expr rowOf = g.indices(real.rowOf), timeOf = g.indices(real.times);
    return {std::move(real), rowOf, timeOf};
  }
  // The rows of a decoding step (one query each, sentenceOf[row] its source sentence) laid out as
  // the positions of their sentences: sentence s's rows in order, padding up to the most any
  // sentence has, so that one batched product per sentence and head reads its keys and values.
  static layers::RealPositions rowsBySentence(const std::vector<int>& sentenceOf, int sentences) {
    std::vector<int> count(size_t(sentences), 0);
    for(int s : sentenceOf)
      ++count[size_t(s)];
    int width = std::max(1, *std::max_element(count.begin(), count.end()));
    layers::RealPositions p;
    p.sentences = sentences;
    p.length = width;
    p.rowOf.assign(size_t(sentences) * width, -1);
    std::fill(count.begin(), count.end(), 0);
    for(size_t r = 0; r < sentenceOf.size(); ++r) {
      int s = sentenceOf[r], slot = s * width + count[size_t(s)]++;
      p.rowOf[size_t(slot)] = int(r);
      p.flat.push_back(slot);
      p.times.push_back(0);  // the step's one position
    }
    return p;
  }

  // Attention's dropout: a mask value per weight.
  Expr drop(Expr x, float p) const { return training_ ? dropout(x, p) : x; }
  // The processing's and the FFN's dropout on the rows x [rows, dim] of positions p, as Marian's
  // (dropout over Shape::Axes({-2, -1}) of its [1, sentences, positions, dim] states): one mask
  // [positions, dim] shared by every sentence of the batch, each row taking its position's row.
  Expr dropShared(Expr x, const Positions& p, float prob) const {
    if(!training_ || prob == 0.f)
      return x;
    return dropout(x, prob, p.timeOf);
  }
  struct Encoded {
    Expr states;  // [source rows, dim]
    Positions positions;
  };

  // A stack's input: embeddings emb [rows, dim] of positions p scaled by sqrt(dim) plus the
  // sinusoids of `times` (p's, or the step's in decoding) as `bottom` (what 'a' of
  // --transformer-postprocess-top adds back after the last layer, as Marian's), and `x`, that
  // after the embedding post-processing (Marian pre-processes the embeddings).
  struct StackInput {
    Expr bottom, x;
  };
  StackInput embedWithPositions(ExpressionGraph& g, Expr emb, const std::string& prefix, const std::vector<int>& times,
                                const Positions& p) {
    Expr bottom = emb * std::sqrt(float(dim_)) + layers::positions(g, times, dim_);
    return {bottom, process(g, prefix + "_emb", postEmb_, bottom, p, nullptr, "_pre")};
  }

  // Marian's word dropout (--dropout-src, --dropout-trg; its embedding layer): whole words, one
  // mask value per time position shared by the sentences of the batch; wordTime[r]: the time of
  // row r's word, of `length`
  Expr dropWords(ExpressionGraph& g, Expr emb, const std::vector<int>& wordTime, int length, float p) const {
    if(!training_ || p == 0.f)
      return emb;
    return emb * rows(dropoutMask(g, Shape({length, 1}), p), g.indices(wordTime));
  }

  // Applies the ops of `ops` to x (rows of positions p) in order; 'a' adds `residual`; a norm is
  // prefix_ln_scale<lnSuffix>.
  Expr process(ExpressionGraph& g, const std::string& prefix, const std::string& ops, Expr x, const Positions& p,
               Expr residual, const std::string& lnSuffix = "") {
    for(char op : ops) {
      if(op == 'd')
        x = dropShared(x, p, dropout_);
      else if(op == 'a') {  // (the options that would add nothing are refused when read)
        ABORT_IF(!residual, "{}: 'a' with nothing to add", prefix);
        x = x + residual;
      }
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

  // rows [rows, dim] of p's real positions -> [B, heads, T, dim/heads], zeros at padding
  Expr splitHeads(Expr x, const Positions& p) const { return toHeads(x, p.rowOf, p.real.sentences, heads_); }
  Expr joinHeads(Expr x, const Positions& p) const { return fromHeads(x, p.rowOf, p.real.rows()); }

  // Keys and values [B, heads, T, dim/heads] of the rows kv [rows, dim] of positions p
  struct KeysValues {
    Expr K, V;
  };
  KeysValues keysValues(ExpressionGraph& g, const std::string& prefix, Expr kv, const Positions& p) {
    return {splitHeads(projection(g, prefix, "k", kv), p), splitHeads(projection(g, prefix, "v", kv), p)};
  }
  using KeysValuesOf = std::function<KeysValues(Expr normalisedInput)>;

  // Multi-head attention: the block's input x (the rows of positions q) pre-processed, its
  // queries over the keys and values that `kv` gives (from that input, from the encoder, or
  // cached); mask (null: none) broadcasts onto [B, heads, Tq, Tk]; the output projected and
  // post-processed with x as the residual. The queries go to heads as the positions q, or as
  // `heads` where those rows are laid out otherwise (decoding's rows by sentence). keepWeights:
  // where to keep the attention weights [B, heads, Tq, Tk] (before their dropout, as Marian).
  Expr attentionBlock(ExpressionGraph& g, const std::string& prefix, Expr x, const Positions& q,
                      const KeysValuesOf& kv, Expr mask, const Positions* heads = nullptr,
                      Expr* keepWeights = nullptr) {
    const Positions& layout = heads ? *heads : q;
    Expr in = process(g, prefix + "_Wo", pre_, x, q, nullptr, "_pre");
    Expr Q = splitHeads(projection(g, prefix, "q", in), layout);
    KeysValues keys = kv(in);
    float scale = 1.f / std::sqrt(float(dim_ / heads_));
    Expr scores = bdot(Q, keys.K, false, true, scale);
    Expr weights = softmax(mask ? maskFill(scores, mask) : scores);
    if(keepWeights)
      *keepWeights = weights;
    Expr context = joinHeads(bdot(drop(weights, dropoutAtt_), keys.V), layout);
    return process(g, prefix + "_Wo", post_, projection(g, prefix, "o", context), q, x);
  }

  // Marian's LayerFFN: depth dense layers (activation and dropout between them), named
  // encoder_l1_ffn_W1/_b1 ... _W<depth>/_b<depth>, norms encoder_l1_ffn_ffn_ln_*
  Expr ffnBlock(ExpressionGraph& g, const std::string& prefix, Expr x, const Positions& p, int inner, int depth) {
    std::string ffn = prefix + "_ffn";
    Expr h = process(g, ffn + "_ffn", pre_, x, p, nullptr, "_pre");
    for(int i = 1; i < depth; ++i) {
      h = layers::dense(g, ffn, h, inner, true, std::to_string(i));
      h = dropShared(activation_ == "relu" ? relu(h) : activation_ == "gelu" ? gelu(h) : swish(h), p, dropoutFfn_);
    }
    Expr out = layers::dense(g, ffn, h, dim_, true, std::to_string(depth));
    return process(g, ffn + "_ffn", post_, out, p, x);
  }

  // --transformer-postprocess-top after the last layer (Marian: postProcess of prefix_top; 'n'
  // is the final norm pre-norm transformers need, encoder_top_ln_scale; 'a' adds the stack's
  // bottom, a skip connection past every layer)
  Expr top(ExpressionGraph& g, const std::string& prefix, Expr x, const Positions& p, Expr bottom) {
    return process(g, prefix + "_top", postTop_, x, p, bottom);
  }

  Encoded encode(ExpressionGraph& g, Expr table, const Batch& batch, Expr srcMask) {
    Positions src = positionsOnGraph(g, layers::realPositions(batch.srcMask, batch.sentences, batch.srcLen));
    Expr emb = dropWords(g, rows(table, g.indices(src.real.pick(batch.srcIds))), src.real.times, batch.srcLen,
                         dropoutSrc_);
    StackInput in = embedWithPositions(g, emb, "encoder", src.real.times, src);
    Expr x = in.x;
    for(int l = 1; l <= encDepth_; ++l) {
      std::string prefix = "encoder_l" + std::to_string(l);
      x = attentionBlock(g, prefix + "_self", x, src,
                         [&](Expr in) { return keysValues(g, prefix + "_self", in, src); }, srcMask);
      x = ffnBlock(g, prefix, x, src, ffn_, ffnDepth_);
    }
    return {top(g, "encoder", x, src, in.bottom), src};
  }

  // --transformer-tied-layers: decoder layer l takes the parameters of layer tied[l-1]
  std::string decoderPrefix(int l) const {
    return "decoder_l" + std::to_string(tiedLayers_.empty() ? l : tiedLayers_[size_t(l - 1)]);
  }
  // the decoder state's name of a layer's cache (by layer, not by parameters: tied layers differ)
  static std::string cacheName(int l, const char* what) { return "l" + std::to_string(l) + "_" + what; }

  // contextHeads: how the queries meet the encoder's [sentences, ...] keys (null: as trg);
  // keepContextWeights: where to keep the context attention's weights
  Expr decoderLayer(ExpressionGraph& g, int l, Expr x, const Positions& trg, const KeysValuesOf& self,
                    Expr selfMask, const KeysValuesOf& context, Expr srcMask,
                    const Positions* contextHeads = nullptr, Expr* keepContextWeights = nullptr) {
    std::string prefix = decoderPrefix(l);
    x = attentionBlock(g, prefix + "_self", x, trg, self, selfMask);
    x = attentionBlock(g, prefix + "_context", x, trg, context, srcMask, contextHeads, keepContextWeights);
    return ffnBlock(g, prefix, x, trg, decFfn_, decFfnDepth_);
  }

  // The whole target at once (training): each position attends to itself and those before it.
  // Returns the states of the real target positions trg; keepAlignment: where to keep the context
  // attention weights of --transformer-guided-alignment-layer.
  Expr decode(ExpressionGraph& g, Expr table, const Batch& batch, const Positions& trg, const Encoded& enc,
              Expr srcMask, Expr* keepAlignment) {
    int T = batch.trgLen;
    // each position's input is the word before it, a zero vector at the first position
    std::vector<int> previous, previousTime;
    std::vector<float> notFirst;
    for(int i : trg.real.flat) {
      bool first = i % T == 0;
      previous.push_back(first ? 0 : batch.trgIds[size_t(i) - 1]);
      previousTime.push_back(first ? 0 : i % T - 1);
      notFirst.push_back(first ? 0.f : 1.f);
    }
    int n = trg.real.rows();
    // word dropout on the target words before the shift, as Marian's
    Expr emb = dropWords(g, rows(table, g.indices(std::move(previous))), previousTime, T, dropoutTrg_) *
               g.constant({n, 1}, std::move(notFirst));
    StackInput in = embedWithPositions(g, emb, "decoder", trg.real.times, trg);
    Expr x = in.x;
    std::vector<float> causal(size_t(T) * T);
    for(int i = 0; i < T; ++i)
      for(int j = 0; j <= i; ++j)
        causal[size_t(i) * T + j] = 1.f;
    Expr selfMask = g.constant({1, 1, T, T}, std::move(causal));
    for(int l = 1; l <= decDepth_; ++l) {
      std::string prefix = decoderPrefix(l);
      x = decoderLayer(
          g, l, x, trg, [&](Expr in) { return keysValues(g, prefix + "_self", in, trg); }, selfMask,
          [&](Expr) { return keysValues(g, prefix + "_context", enc.states, enc.positions); }, srcMask, nullptr,
          l == alignmentLayer_ ? keepAlignment : nullptr);
    }
    return top(g, "decoder", x, trg, in.bottom);
  }

  int srcVocab_, trgVocab_, dim_, heads_, ffn_, ffnDepth_, decFfn_, decFfnDepth_;
  std::vector<int> tiedLayers_;
  int encDepth_, decDepth_;
  int alignmentLayer_;  // the decoder layer whose context attention is guided (from 1)
  std::string activation_, pre_, post_, postEmb_, postTop_;
  float dropout_, dropoutAtt_, dropoutFfn_, dropoutSrc_, dropoutTrg_, smoothing_;
  EmbeddingTies ties_;
  bool training_ = false;
};

}  // namespace

std::unique_ptr<EncoderDecoder> createTransformer(const Options& o, size_t srcVocab, size_t trgVocab) {
  return std::make_unique<Transformer>(o, srcVocab, trgVocab);
}

}  // namespace marian
