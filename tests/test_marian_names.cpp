// The transformer's parameters carry the names, shapes and layouts real Marian v1.12 gives them,
// so that Marian loads a model trained here and this program loads Marian's (issue 20). The
// expected lists are written from marian-dev's src/models/transformer.h: MultiHead (prefix_Wq,
// _bq, _Wk, _bk, _Wv, _bv, _Wo, _bo), LayerAttention (preProcess/postProcess of prefix_Wo:
// prefix_Wo_ln_scale_pre, prefix_Wo_ln_scale), LayerFFN (prefix = *_l1_ffn; denseInline suffixes
// 1 and 2: *_ffn_W1, *_ffn_b1, *_ffn_W2, *_ffn_b2; norms of prefix_ffn: *_ffn_ffn_ln_scale),
// EncoderTransformer::apply and DecoderTransformer::step (preProcess of prefix_emb:
// encoder_emb_ln_scale_pre) and lazyCreateOutputLayer (decoder_ff_logit_out, its untied weight
// decoder_ff_logit_out_Wt [vocab, dim] in layers/output.cpp). The s2s model's names come from
// models/s2s.h and the RNN layers (see the s2s tests below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/options.h"
#include "data/vocab.h"
#include "graph/operators.h"
#include "models/encoder_decoder.h"
#include "models/layers.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

// Declares the parameters of the model of these options in `graph` (vocabularies `srcVocab` and
// `trgVocab`).
void declareModel(ExpressionGraph& graph, const std::vector<std::string>& extra, size_t trgVocab,
                  size_t srcVocab = 11) {
  std::vector<std::string> args = {"marian", "--dim-emb", "8", "--transformer-dim-ffn", "12", "--transformer-heads",
                                   "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for(const auto& a : args)
    argv.push_back(a.c_str());
  Options o = parseOptions(int(argv.size()), argv.data(), ProgramMode::modelConfig).options;
  auto model = createModel(o, srcVocab, trgVocab);
  std::vector<int> eos{Vocab::kEos};
  Batch declare = Batch::fromSources({&eos});
  declare.trgLen = 1;
  declare.trgIds = {Vocab::kEos};
  declare.trgMask = {1.f};
  declare.trgWords = 1;
  model->loss(graph, declare, false);
}

// The parameters (name -> shape) the model of these options declares.
std::map<std::string, std::string> namesAndShapes(const std::vector<std::string>& extra, size_t trgVocab = 13) {
  ExpressionGraph graph(cpuDevice(0), 1, 0);
  declareModel(graph, extra, trgVocab);
  std::map<std::string, std::string> out;
  for(const auto& e : graph.params().entries())
    out[e.name] = e.shape.toString();
  return out;
}

std::set<std::string> attention(const std::string& p, bool preNorm, bool postNorm) {
  std::set<std::string> s = {p + "_Wq", p + "_bq", p + "_Wk", p + "_bk", p + "_Wv", p + "_bv", p + "_Wo", p + "_bo"};
  if(postNorm)
    s.insert({p + "_Wo_ln_scale", p + "_Wo_ln_bias"});
  if(preNorm)
    s.insert({p + "_Wo_ln_scale_pre", p + "_Wo_ln_bias_pre"});
  return s;
}

std::set<std::string> ffn(const std::string& layer, bool preNorm, bool postNorm) {
  std::string p = layer + "_ffn";
  std::set<std::string> s = {p + "_W1", p + "_b1", p + "_W2", p + "_b2"};
  if(postNorm)
    s.insert({p + "_ffn_ln_scale", p + "_ffn_ln_bias"});
  if(preNorm)
    s.insert({p + "_ffn_ln_scale_pre", p + "_ffn_ln_bias_pre"});
  return s;
}

std::set<std::string> keys(const std::map<std::string, std::string>& m) {
  std::set<std::string> s;
  for(const auto& [k, v] : m)
    s.insert(k);
  return s;
}

TEST(MarianNames, PostNormTransformerWithUntiedOutput) {
  auto got = namesAndShapes({"--enc-depth", "1", "--dec-depth", "1"});
  std::set<std::string> expected = {"encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_out_Wt", "decoder_ff_logit_out_b"};
  for(const auto& set : {attention("encoder_l1_self", false, true), ffn("encoder_l1", false, true),
                         attention("decoder_l1_self", false, true), attention("decoder_l1_context", false, true),
                         ffn("decoder_l1", false, true)})
    expected.insert(set.begin(), set.end());
  EXPECT_EQ(keys(got), expected);
  EXPECT_EQ(got["decoder_ff_logit_out_Wt"], "[13x8]");  // [vocab, dim], as Marian keeps it
  EXPECT_EQ(got["encoder_l1_ffn_W1"], "[8x12]");
  EXPECT_EQ(got["encoder_l1_ffn_b2"], "[1x8]");
}

TEST(MarianNames, PreNormTransformerWithEmbeddingNormAndTiedEmbeddings) {
  auto got = namesAndShapes({"--enc-depth", "2", "--dec-depth", "1", "--transformer-preprocess", "n",
                             "--transformer-postprocess", "da", "--transformer-postprocess-emb", "n",
                             "--tied-embeddings-all", "--transformer-postprocess-top", "n"},
                            11);
  std::set<std::string> expected = {"Wemb", "decoder_ff_logit_out_b", "encoder_emb_ln_scale_pre",
                                    "encoder_emb_ln_bias_pre", "decoder_emb_ln_scale_pre", "decoder_emb_ln_bias_pre",
                                    // --transformer-postprocess-top n: postProcess(prefix_ + "_top")
                                    "encoder_top_ln_scale", "encoder_top_ln_bias", "decoder_top_ln_scale",
                                    "decoder_top_ln_bias"};
  for(const auto& set : {attention("encoder_l1_self", true, false), ffn("encoder_l1", true, false),
                         attention("encoder_l2_self", true, false), ffn("encoder_l2", true, false),
                         attention("decoder_l1_self", true, false), attention("decoder_l1_context", true, false),
                         ffn("decoder_l1", true, false)})
    expected.insert(set.begin(), set.end());
  EXPECT_EQ(keys(got), expected);
}

// LayerFFN's stack (transformer.h: denseInline suffixes 1..depth, the decoder's own
// --transformer-decoder-dim-ffn and --transformer-decoder-ffn-depth) and DecoderTransformer::step's
// --transformer-tied-layers (decoder layer i named after layer tied[i])
TEST(MarianNames, FeedForwardDepthsAndTiedDecoderLayers) {
  auto got = namesAndShapes({"--enc-depth", "1", "--dec-depth", "3", "--transformer-ffn-depth", "3",
                             "--transformer-decoder-dim-ffn", "6", "--transformer-decoder-ffn-depth", "2",
                             "--transformer-tied-layers", "1", "1", "2", "--tied-embeddings-all"},
                            11);
  std::set<std::string> expected = {"Wemb", "decoder_ff_logit_out_b", "encoder_l1_ffn_W3", "encoder_l1_ffn_b3"};
  for(const auto& set : {attention("encoder_l1_self", false, true), ffn("encoder_l1", false, true),
                         attention("decoder_l1_self", false, true), attention("decoder_l1_context", false, true),
                         attention("decoder_l2_self", false, true), attention("decoder_l2_context", false, true),
                         ffn("decoder_l1", false, true), ffn("decoder_l2", false, true)})
    expected.insert(set.begin(), set.end());
  EXPECT_EQ(keys(got), expected);
  EXPECT_EQ(got["encoder_l1_ffn_W1"], "[8x12]");
  EXPECT_EQ(got["encoder_l1_ffn_W2"], "[12x12]");
  EXPECT_EQ(got["encoder_l1_ffn_W3"], "[12x8]");
  EXPECT_EQ(got["decoder_l1_ffn_W1"], "[8x6]");
  EXPECT_EQ(got["decoder_l2_ffn_W2"], "[6x8]");
  EXPECT_THROW(namesAndShapes({"--dec-depth", "2", "--transformer-tied-layers", "1"}), Error);
}

// The s2s's parameters, names and shapes, as Marian v1.12 gives them (marian-dev src/models/s2s.h:
// EncoderS2S::applyEncoderRNN names the bidirectional stacks prefix_ + "_bi" and "_bi_r", layer
// l > 1 adding "_l<l>_cell1"; DecoderS2S::startState's mlp::Dense "decoder_ff_state";
// constructDecoderRNN's cells "decoder_cell1" and "decoder_cell2" around the attention
// "decoder"; DecoderS2S::step's mlp::Dense "decoder_ff_logit_l1" of three inputs (suffixes 0, 1,
// 2) and mlp::Output "decoder_ff_logit_l2", tieTransposed to the embeddings). src/rnn/cells.h
// GRU: prefix_U [H, 2H], _Ux [H, H], _W [in, 2H], _Wx [in, H], _b [1, 2H], _bx [1, H], with
// layer normalisation _gamma1 and _gamma2 [1, 3H]. src/rnn/attention.h GlobalAttention:
// _W_comb_att [H, 2H], _Wc_att [2H, 2H], _U_att [2H, 1], _b_att [1, 2H], with layer
// normalisation _att_gamma1 and _att_gamma2 [1, 2H]. src/layers/generic.h mlp::Dense:
// prefix_W<i>, _b<i>, with layer normalisation _gamma<i> (no other beta). src/layers/output.cpp
// mlp::Output: prefix_Wt [vocab, dim] unless tied, prefix_b [1, vocab]. src/layers/embedding.cpp
// createEmbeddingLayer: encoder_Wemb/decoder_Wemb, or Wemb with --tied-embeddings-src/-all.
// E = dim-emb 8, H = dim-rnn 6, the context 2H = 12, vocabularies 11 and 13 (11 when tied).
void addGru(std::map<std::string, std::string>& m, const std::string& p, int in, bool layerNorm) {
  m[p + "_U"] = "[6x12]";
  m[p + "_Ux"] = "[6x6]";
  m[p + "_W"] = "[" + std::to_string(in) + "x12]";
  m[p + "_Wx"] = "[" + std::to_string(in) + "x6]";
  m[p + "_b"] = "[1x12]";
  m[p + "_bx"] = "[1x6]";
  if(layerNorm) {
    m[p + "_gamma1"] = "[1x18]";
    m[p + "_gamma2"] = "[1x18]";
  }
}

std::map<std::string, std::string> s2sDecoder(bool layerNorm) {
  std::map<std::string, std::string> m = {
      {"decoder_ff_state_W", "[12x6]"},     {"decoder_ff_state_b", "[1x6]"},     {"decoder_W_comb_att", "[6x12]"},
      {"decoder_Wc_att", "[12x12]"},        {"decoder_U_att", "[12x1]"},         {"decoder_b_att", "[1x12]"},
      {"decoder_ff_logit_l1_W0", "[8x8]"},  {"decoder_ff_logit_l1_b0", "[1x8]"}, {"decoder_ff_logit_l1_W1", "[6x8]"},
      {"decoder_ff_logit_l1_b1", "[1x8]"},  {"decoder_ff_logit_l1_W2", "[12x8]"}, {"decoder_ff_logit_l1_b2", "[1x8]"}};
  addGru(m, "decoder_cell1", 8, layerNorm);
  addGru(m, "decoder_cell2", 12, layerNorm);
  if(layerNorm)
    m.insert({{"decoder_ff_state_gamma", "[1x6]"},
              {"decoder_att_gamma1", "[1x12]"},
              {"decoder_att_gamma2", "[1x12]"},
              {"decoder_ff_logit_l1_gamma0", "[1x8]"},
              {"decoder_ff_logit_l1_gamma1", "[1x8]"},
              {"decoder_ff_logit_l1_gamma2", "[1x8]"}});
  return m;
}

TEST(MarianNames, S2SOneLayerUntied) {
  auto got = namesAndShapes({"--type", "s2s", "--dim-rnn", "6", "--enc-depth", "1"});
  auto expected = s2sDecoder(false);
  expected.insert({{"encoder_Wemb", "[11x8]"},
                   {"decoder_Wemb", "[13x8]"},
                   {"decoder_ff_logit_l2_Wt", "[13x8]"},  // [vocab, dim-emb], transposed as Marian keeps it
                   {"decoder_ff_logit_l2_b", "[1x13]"}});
  addGru(expected, "encoder_bi", 8, false);
  addGru(expected, "encoder_bi_r", 8, false);
  EXPECT_EQ(got, expected);
}

TEST(MarianNames, S2STwoLayersLayerNormAndAllTied) {
  auto got = namesAndShapes({"--type", "s2s", "--dim-rnn", "6", "--enc-depth", "2", "--layer-normalization",
                             "--tied-embeddings-all"},
                            11);
  auto expected = s2sDecoder(true);
  expected.insert({{"Wemb", "[11x8]"}, {"decoder_ff_logit_l2_b", "[1x11]"}});  // the output tied to Wemb
  // two separate stacks: forward encoder_bi -> encoder_bi_l2_cell1, backward encoder_bi_r ->
  // encoder_bi_r_l2_cell1, the second layers over the first's H states
  addGru(expected, "encoder_bi", 8, true);
  addGru(expected, "encoder_bi_l2_cell1", 6, true);
  addGru(expected, "encoder_bi_r", 8, true);
  addGru(expected, "encoder_bi_r_l2_cell1", 6, true);
  EXPECT_EQ(got, expected);
}

// DecoderS2S::step ties the output to decoder_Wemb with --tied-embeddings, to Wemb with
// --tied-embeddings-all (or -src as well); --tied-embeddings-src alone shares Wemb between the
// encoder and the decoder but keeps decoder_ff_logit_l2_Wt.
TEST(MarianNames, S2STiedEmbeddingsOptions) {
  auto names = [](const std::vector<std::string>& tied) {
    std::vector<std::string> args = {"--type", "s2s", "--dim-rnn", "6"};
    args.insert(args.end(), tied.begin(), tied.end());
    std::set<std::string> embeddings;
    for(const auto& [name, shape] : namesAndShapes(args, 11))
      if(name.find("Wemb") != std::string::npos || name.find("logit_l2") != std::string::npos)
        embeddings.insert(name);
    return embeddings;
  };
  using S = std::set<std::string>;
  EXPECT_EQ(names({}), (S{"encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_l2_Wt", "decoder_ff_logit_l2_b"}));
  EXPECT_EQ(names({"--tied-embeddings"}), (S{"encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_l2_b"}));
  EXPECT_EQ(names({"--tied-embeddings-src"}), (S{"Wemb", "decoder_ff_logit_l2_Wt", "decoder_ff_logit_l2_b"}));
  EXPECT_EQ(names({"--tied-embeddings", "--tied-embeddings-src"}), (S{"Wemb", "decoder_ff_logit_l2_b"}));
  EXPECT_EQ(names({"--tied-embeddings-all"}), (S{"Wemb", "decoder_ff_logit_l2_b"}));
  EXPECT_THROW(namesAndShapes({"--type", "s2s", "--tied-embeddings-all"}, 13), Error);  // two vocabulary sizes
}

// Marian's other s2s variants (alternating or bi-unidirectional encoders, deep transitions,
// stacked decoders, skip connections, LSTMs) are errors that name the option.
TEST(MarianNames, S2SVariantsNotImplementedAreErrorsNamingTheOption) {
  for(std::vector<std::string> option : std::vector<std::vector<std::string>>{{"--enc-type", "alternating"},
                                                                              {"--enc-cell", "lstm"},
                                                                              {"--dec-cell", "lstm"},
                                                                              {"--enc-cell-depth", "2"},
                                                                              {"--dec-cell-base-depth", "3"},
                                                                              {"--dec-cell-high-depth", "2"},
                                                                              {"--dec-depth", "2"},
                                                                              {"--skip"}}) {
    std::vector<std::string> args = {"--type", "s2s", "--dim-rnn", "6"};
    args.insert(args.end(), option.begin(), option.end());
    try {
      namesAndShapes(args);
      ADD_FAILURE() << option[0] << " was accepted";
    } catch(const Error& e) {
      EXPECT_NE(std::string(e.what()).find(option[0]), std::string::npos) << e.what();
    }
  }
}

// Parameters start in Marian's ranges (src/graph/node_initializers.cpp, layers/embedding.cpp,
// layers/output.cpp): tables of vectors [vocab, dim] (embeddings, an untied output matrix) in
// +-sqrt(3 / dim), so a row has about unit length after the sqrt(dim) scaling whatever the
// vocabulary; every other matrix in Glorot's +-sqrt(6 / (in + out)). With Glorot's range on the
// tables too (4x smaller for 8k x 256) this program learned slower than Marian on the same config
// (Multi30k, validation perplexity after the first epoch 55.3 against Marian's 37.5).
TEST(MarianNames, ParametersStartInMariansRanges) {
  const std::vector<std::vector<std::string>> models = {
      {"--dim-emb", "16", "--enc-depth", "1", "--dec-depth", "1"},
      {"--type", "s2s", "--dim-emb", "16", "--dim-rnn", "6"}};
  for(const auto& model : models) {
    ExpressionGraph graph(cpuDevice(0), 1234);
    declareModel(graph, model, 900, 1000);
    graph.params().allocate();
    int tables = 0;
    for(const auto& e : graph.params().entries()) {
      if(e.shape.rank() != 2 || e.shape[0] == 1)
        continue;  // biases and norms: zeros and ones
      auto ends = [&](const std::string& tail) {
        return e.name.size() >= tail.size() && e.name.compare(e.name.size() - tail.size(), tail.size(), tail) == 0;
      };
      bool table = ends("Wemb") || ends("_Wt");
      tables += table;
      float in = float(e.shape[0]), out = float(e.shape[1]);
      float bound = table ? std::sqrt(3.f / out) : std::sqrt(6.f / (in + out));
      float largest = 0.f;
      for(float v : kernels::toHost(graph.params().value(e.name)))
        largest = std::max(largest, std::fabs(v));
      EXPECT_LE(largest, bound) << e.name << " " << e.shape.toString();
      if(e.shape.elements() >= 100) {  // the largest of 100 draws lies in the top tenth but for 0.9^100
        EXPECT_GT(largest, 0.9f * bound) << e.name << " " << e.shape.toString();
      }
    }
    EXPECT_EQ(tables, 3) << "encoder_Wemb, decoder_Wemb and the untied output matrix";
  }
}

// A transformer of the test's size with `extra` options, and the cost of a batch of `copies` of
// one sentence pair under random seed 77 (the parameters initialised once per model).
struct SmallTransformer {
  std::unique_ptr<EncoderDecoder> model;
  ExpressionGraph graph{cpuDevice(0), 1234};
  std::vector<int> source = {3, 4, 5, 6, Vocab::kEos}, target = {7, 8, 9, Vocab::kEos};
  explicit SmallTransformer(std::vector<std::string> extra) {
    std::vector<std::string> args = {"marian", "--dim-emb", "16", "--transformer-dim-ffn", "24", "--transformer-heads",
                                     "2", "--enc-depth", "2", "--dec-depth", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<const char*> argv;
    for(const auto& a : args)
      argv.push_back(a.c_str());
    model = createModel(parseOptions(int(argv.size()), argv.data(), ProgramMode::modelConfig).options, 11, 11);
    model->loss(graph, batchOf(1), false);
    graph.params().allocate();
  }
  Batch batchOf(int copies) const {
    std::vector<const std::vector<int>*> sources(size_t(copies), &source);
    Batch b = Batch::fromSources(sources);
    b.trgLen = int(target.size());
    for(int c = 0; c < copies; ++c) {
      b.trgIds.insert(b.trgIds.end(), target.begin(), target.end());
      b.trgMask.insert(b.trgMask.end(), target.size(), 1.f);
    }
    b.trgWords = b.trgIds.size();
    return b;
  }
  double cost(int copies, bool training) {
    graph.clear();
    graph.setRandomSeed(77);
    Expr loss = model->loss(graph, batchOf(copies), training);
    graph.forward();
    return double(kernels::toHost(loss->val())[0]);
  }
};

// As Marian's (dropout over Shape::Axes({-2, -1}) of its [1, sentences, positions, dim] states),
// the transformer's processing and FFN dropout draw one mask [positions, dim] for the batch: two
// copies of a sentence in one batch cost twice what it costs alone under the same random seed
// (masks drawn per sentence would give the copies different costs).
TEST(MarianTraining, TransformerDropoutMasksAreSharedByTheSentencesOfABatch) {
  SmallTransformer t({"--transformer-dropout", "0.3", "--transformer-dropout-ffn", "0.3"});
  double alone = t.cost(1, true), twice = t.cost(2, true);
  EXPECT_GT(std::fabs(alone - t.cost(1, false)), 1e-3) << "dropout changed the cost";
  EXPECT_NEAR(twice, 2 * alone, 1e-5 * std::fabs(alone));
}

// Marian's word dropout (--dropout-src, --dropout-trg) reaches the transformer too: whole words
// in training only, one mask value per position shared by the sentences of the batch (two copies
// of a sentence cost twice what one does under the same seed).
TEST(MarianTraining, TransformerWordDropoutDropsWholeWordsPerPosition) {
  for(std::string option : {"--dropout-src", "--dropout-trg"}) {
    SCOPED_TRACE(option);
    SmallTransformer plain({}), dropping({option, "0.5"});
    kernels::copy(dropping.graph.params().values(), plain.graph.params().values());
    double alone = dropping.cost(1, true);
    EXPECT_NEAR(dropping.cost(1, false), plain.cost(1, false), 1e-6);  // none in inference
    EXPECT_NEAR(plain.cost(1, true), plain.cost(1, false), 1e-6);       // no dropout otherwise
    EXPECT_GT(std::fabs(alone - plain.cost(1, true)), 1e-3) << "word dropout changed the cost";
    EXPECT_NEAR(dropping.cost(2, true), 2 * alone, 1e-5 * std::fabs(alone));
  }
}

// 'a' in --transformer-postprocess-top adds the stack's bottom (the scaled embeddings with their
// positions) after the last layer, as Marian's skip connection past the stack: no parameter of
// its own, another cost; 'a' where there is nothing to add is refused, as Marian's preProcess.
TEST(MarianTraining, PostprocessTopAddsTheStacksBottom) {
  SmallTransformer plain({}), skip({"--transformer-postprocess-top", "a"});
  EXPECT_EQ(skip.graph.params().totalSize(), plain.graph.params().totalSize());
  kernels::copy(skip.graph.params().values(), plain.graph.params().values());
  EXPECT_GT(std::fabs(skip.cost(1, false) - plain.cost(1, false)), 1e-3);
  for(std::string option : {"--transformer-preprocess", "--transformer-postprocess-emb"}) {
    std::string error;
    try {
      SmallTransformer refused({option, "an"});
    } catch(const Error& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(option + " 'an': a (add) has no residual there"), std::string::npos) << error;
  }
}

// Marian's gelu since v1.12.3: 0.5 x (1 + erf(x / sqrt 2)), not x sigmoid(1.702 x).
TEST(MarianTraining, GeluIsTheExactForm) {
  ExpressionGraph g(cpuDevice(0), 1);
  std::vector<float> xs = {-2.27f, -0.5f, 0.f, 1.f, 3.f};
  Expr y = gelu(g.constant({int(xs.size())}, xs));
  g.forward();
  std::vector<float> got = kernels::toHost(y->val());
  for(size_t i = 0; i < xs.size(); ++i)
    EXPECT_NEAR(got[i], 0.5 * xs[i] * (1 + std::erf(xs[i] / std::sqrt(2.0))), 1e-6) << xs[i];
}

// Marian's sinusoids for an odd --dim-emb: dim / 2 timescales as a float (2.5 for 5 columns),
// sines in the first 2 columns, cosines of frequency i % 2 in the rest (the last cos(t)).
TEST(MarianTraining, SinusoidsOfAnOddDimensionAreMarians) {
  ExpressionGraph g(cpuDevice(0), 1);
  Expr p = layers::positions(g, {3}, 5);
  g.forward();
  std::vector<float> got = kernels::toHost(p->val());
  double inc = std::log(10000.0) / 1.5, slow = 3 * std::exp(-inc);
  std::vector<double> want = {std::sin(3.0), std::sin(slow), std::cos(3.0), std::cos(slow), std::cos(3.0)};
  ASSERT_EQ(got.size(), want.size());
  for(size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5) << "column " << i;
}

// Marian's --type nematus is another RNN (gru-nematus cells, Nematus's parameter names), not this
// program's s2s: refused by name instead of trained as s2s and saved as a nematus model.
TEST(MarianTraining, TypeNematusIsRefusedByName) {
  const char* argv[] = {"marian", "--type", "nematus"};
  try {
    createModel(parseOptions(3, argv, ProgramMode::modelConfig).options, 11, 11);
    ADD_FAILURE() << "--type nematus was accepted";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--type nematus"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--type s2s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marian
