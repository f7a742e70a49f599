// --mini-batch-fit: the sizes it finds are exact. For each length, a training step (forward and
// backward, as DeviceWorker runs it) of the fitted number of sentences runs within --workspace,
// and one sentence more passes it — measured on a real graph's workspace (its peak), so the
// shapes the fit counts are what the graph allocates. Sync-SGD's batches hold the fit of every device.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/error.h"
#include "graph/operators.h"
#include "models/encoder_decoder.h"
#include "tensors/kernels.h"
#include "training/graph_groups/mixed_precision.h"
#include "training/loop/batch_fit.h"

namespace marian {
namespace {

Options options(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"marian", "--dim-emb", "32", "--transformer-dim-ffn", "64", "--transformer-heads",
                                   "2", "--enc-depth", "2", "--dec-depth", "1", "--max-length", "45",
                                   "--transformer-dropout", "0.1"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for(const auto& a : args)
    argv.push_back(a.c_str());
  return parseOptions(int(argv.size()), argv.data(), ProgramMode::modelConfig).options;
}

// whether a training step of n sentences of len tokens keeps within `workspaceMB` (its peak)
bool stepFits(EncoderDecoder& model, ExpressionGraph& graph, size_t n, size_t len, size_t workspaceMB) {
  graph.clear();
  Expr ce = model.loss(graph, fitProbeBatch(n, len), true);
  Expr cost = ce * 1.f;
  graph.forward({ce, cost}, /*backwardFollows=*/true);  // as DeviceWorker runs a step
  graph.backward(cost);
  return graph.workspace().peak() <= workspaceMB << 20;
}

void checkExact(size_t workspaceMB, std::vector<std::string> extra) {
  extra.insert(extra.end(), {"-w", std::to_string(workspaceMB)});
  Options o = options(extra);
  const size_t vocab = 300, step = 10;
  std::vector<size_t> fit = fitBatchSentences(o, vocab, vocab, step, 1);
  ASSERT_EQ(fit.size(), 5u);  // 10, 20, 30, 40 and 45 tokens
  auto model = createModel(o, vocab, vocab);
  for(size_t k = 0; k < fit.size(); ++k) {
    size_t len = std::min((k + 1) * step, size_t(45));
    SCOPED_TRACE("length " + std::to_string(len) + ", " + std::to_string(fit[k]) + " sentences");
    if(k > 0) {
      EXPECT_LE(fit[k], fit[k - 1]);
    }
    ASSERT_GT(fit[k], 0u);
    // a fresh graph each time: a workspace that has grown keeps its size
    ExpressionGraph fits(cpuDevice(0), 1, workspaceMB), overflows(cpuDevice(0), 1, workspaceMB);
    fits.setProductType(productTypeFromOptions(o, {cpuDevice(0)}));
    overflows.setProductType(productTypeFromOptions(o, {cpuDevice(0)}));
    EXPECT_TRUE(stepFits(*model, fits, fit[k], len, workspaceMB));
    EXPECT_FALSE(stepFits(*model, overflows, fit[k] + 1, len, workspaceMB));
  }
  EXPECT_GT(fit.front(), 4 * fit.back());  // short sentences: many more per batch
}

TEST(MiniBatchFit, FittedSizesRunAndOneMoreOverflowsTransformer) { checkExact(6, {}); }
TEST(MiniBatchFit, FittedSizesRunAndOneMoreOverflowsS2S) {
  checkExact(24, {"--type", "s2s", "--dim-rnn", "32", "--layer-normalization", "--dropout-rnn", "0.1"});
}

// bfloat16 products keep the values that backward reads only as their operands in bfloat16
// (ExpressionGraph::forward): the fit counts that exactly, and more sentences fit than in float32.
TEST(MiniBatchFit, Bfloat16ProductsFitMoreSentencesExactly) {
  if(std::string why = cpuLacksProductType(ProductType::bfloat16); !why.empty())
    GTEST_SKIP() << why;
  checkExact(6, {"--precision", "bfloat16", "float32"});
  std::vector<size_t> f32 = fitBatchSentences(options({"-w", "6"}), 300, 300, 10, 1),
                      bf16 = fitBatchSentences(options({"-w", "6", "--precision", "bfloat16"}), 300, 300, 10, 1);
  ASSERT_EQ(f32.size(), bf16.size());
  for(size_t k = 0; k < f32.size(); ++k)
    EXPECT_GT(bf16[k], f32[k] * 11 / 10) << "length " << (k + 1) * 10;
}

// Keeping those values in bfloat16 changes no gradient: the products read the same rounded values
// either way. The transformer's training step as DeviceWorker runs it against a forward that keeps
// every value in float32, with released blocks filled with NaN (a read of a value gone shows).
TEST(MiniBatchFit, Bfloat16OperandsKeptForBackwardChangeNoGradient) {
  if(std::string why = cpuLacksProductType(ProductType::bfloat16); !why.empty())
    GTEST_SKIP() << why;
  setenv("MARIAN_POISON_RELEASED", "1", 1);
  for(std::string type : {"transformer", "s2s"}) {
    SCOPED_TRACE(type);
    Options o = options({"--type", type, "--dim-rnn", "32", "--transformer-dropout", "0", "--precision", "bfloat16"});
    auto model = createModel(o, 300, 300);
    Batch batch = fitProbeBatch(3, 7);
    struct Step {
      std::vector<float> gradients;
      size_t peak, predicted;
    };
    auto step = [&](ProductType type, bool keepAll) {
      ExpressionGraph graph(cpuDevice(0), 1);
      graph.setProductType(type);
      Expr ce = model->loss(graph, batch, true);
      Expr cost = ce * 1.f;
      Step s;
      s.predicted = graph.workspaceBytes({ce, cost}, true);
      if(keepAll)
        graph.forward();  // every value kept, in float32
      else
        graph.forward({ce, cost}, /*backwardFollows=*/true);
      graph.backward(cost);
      s.peak = graph.workspace().peak();
      s.gradients = kernels::toHost(graph.params().grads());
      return s;
    };
    Step all = step(ProductType::bfloat16, true), kept = step(ProductType::bfloat16, false),
         f32 = step(ProductType::float32, false);
    ASSERT_EQ(all.gradients.size(), kept.gradients.size());
    for(size_t i = 0; i < all.gradients.size(); ++i)
      ASSERT_EQ(all.gradients[i], kept.gradients[i]) << "gradient value " << i;  // bitwise (a NaN fails too)
    EXPECT_EQ(kept.peak, kept.predicted);
    EXPECT_EQ(f32.peak, f32.predicted);
    // the same schedule in float32 keeps those operands in float32: more memory
    EXPECT_LT(kept.peak * 10, f32.peak * 9);
  }
}

TEST(MiniBatchFit, SyncBatchesHoldEveryDevicesShareAndTooSmallWorkspacesAreNamed) {
  Options o = options({"-w", "6"});
  std::vector<size_t> one = fitBatchSentences(o, 300, 300, 10, 1), three = fitBatchSentences(o, 300, 300, 10, 3);
  ASSERT_EQ(one.size(), three.size());
  for(size_t k = 0; k < one.size(); ++k)
    EXPECT_EQ(three[k], 3 * one[k]);
  try {
    fitBatchSentences(options({"-w", "1", "--max-length", "400"}), 300, 300, 10, 1);
    ADD_FAILURE() << "a workspace too small for one sentence was accepted";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--workspace 1 MB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marian
