// The transformer's parameters carry the names, shapes and layouts real Marian v1.12 gives them,
// so that Marian loads a model trained here and this program loads Marian's (issue 20). The
// expected lists are written from marian-dev's src/models/transformer.h: MultiHead (prefix_Wq,
// _bq, _Wk, _bk, _Wv, _bv, _Wo, _bo), LayerAttention (preProcess/postProcess of prefix_Wo:
// prefix_Wo_ln_scale_pre, prefix_Wo_ln_scale), LayerFFN (prefix = *_l1_ffn; denseInline suffixes
// 1 and 2: *_ffn_W1, *_ffn_b1, *_ffn_W2, *_ffn_b2; norms of prefix_ffn: *_ffn_ffn_ln_scale),
// EncoderTransformer::apply and DecoderTransformer::step (preProcess of prefix_emb:
// encoder_emb_ln_scale_pre) and lazyCreateOutputLayer (decoder_ff_logit_out, its untied weight
// decoder_ff_logit_out_Wt [vocab, dim] in layers/output.cpp). Models saved with this project's
// earlier names still load, renamed (models/legacy_names.cpp).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/options.h"
#include "data/vocab.h"
#include "models/encoder_decoder.h"
#include "models/legacy_names.h"

namespace marian {
namespace {

std::map<std::string, std::string> namesAndShapes(const std::vector<std::string>& extra, size_t trgVocab = 13) {
  std::vector<std::string> args = {"marian", "--dim-emb", "8", "--transformer-dim-ffn", "12", "--transformer-heads",
                                   "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for(const auto& a : args)
    argv.push_back(a.c_str());
  Options o = parseOptions(int(argv.size()), argv.data(), ProgramMode::modelConfig).options;
  auto model = createModel(o, 11, trgVocab);
  ExpressionGraph graph(cpuDevice(0), 1, 0);
  std::vector<int> eos{Vocab::kEos};
  Batch declare = Batch::fromSources({&eos});
  declare.trgLen = 1;
  declare.trgIds = {Vocab::kEos};
  declare.trgMask = {1.f};
  declare.trgWords = 1;
  model->loss(graph, declare, false);
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

TEST(MarianNames, EarlierNamesAreRenamedAndTheUntiedOutputTransposed) {
  std::vector<NpzItem> items;
  auto add = [&](const std::string& name, std::vector<size_t> shape, std::vector<float> v) {
    items.push_back(npzFloat32(name, shape, v.data()));
  };
  add("encoder_l1_ffn_W1_W", {2, 3}, {1, 2, 3, 4, 5, 6});
  add("encoder_l1_ffn_W1_b", {1, 3}, {0, 0, 0});
  add("decoder_l2_ffn_W2_W", {3, 2}, {1, 2, 3, 4, 5, 6});
  add("decoder_l2_ffn_W2_b", {1, 2}, {0, 0});
  add("encoder_l1_ffn_ln_scale", {1, 2}, {1, 1});
  add("encoder_l1_ffn_pre_ln_bias", {1, 2}, {0, 0});
  add("decoder_l1_context_Wo_pre_ln_scale", {1, 2}, {1, 1});
  add("encoder_emb_ln_bias", {1, 2}, {0, 0});
  add("decoder_ff_logit_out_W", {2, 3}, {1, 2, 3, 4, 5, 6});
  add("encoder_l1_self_Wq", {2, 2}, {1, 0, 0, 1});  // unchanged
  EXPECT_EQ(renameLegacyParameters(items), 9u);
  std::vector<std::string> names;
  for(const auto& i : items)
    names.push_back(i.name);
  EXPECT_EQ(names, (std::vector<std::string>{"encoder_l1_ffn_W1", "encoder_l1_ffn_b1", "decoder_l2_ffn_W2",
                                             "decoder_l2_ffn_b2", "encoder_l1_ffn_ffn_ln_scale",
                                             "encoder_l1_ffn_ffn_ln_bias_pre", "decoder_l1_context_Wo_ln_scale_pre",
                                             "encoder_emb_ln_bias_pre", "decoder_ff_logit_out_Wt",
                                             "encoder_l1_self_Wq"}));
  const NpzItem& wt = items[8];
  EXPECT_EQ(wt.shape, (std::vector<size_t>{3, 2}));
  const float* v = reinterpret_cast<const float*>(wt.bytes.data());
  EXPECT_EQ(std::vector<float>(v, v + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(renameLegacyParameters(items), 0u);  // today's names stay
}

}  // namespace
}  // namespace marian
