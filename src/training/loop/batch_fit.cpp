#include "training/loop/batch_fit.h"

#include "common/error.h"
#include "common/logging.h"
#include "graph/operators.h"
#include "models/encoder_decoder.h"
#include "tensors/devices_from_options.h"
#include "training/graph_groups/mixed_precision.h"

namespace marian {

Batch fitProbeBatch(size_t n, size_t len) {  // ids of words, </s> last
  Batch b;
  b.sentences = int(n);
  b.srcLen = b.trgLen = int(len);
  b.srcIds.assign(n * len, 2);
  b.trgIds.assign(n * len, 2);
  for(size_t s = 0; s < n; ++s)
    b.srcIds[s * len + len - 1] = b.trgIds[s * len + len - 1] = 0;
  b.srcMask.assign(n * len, 1.f);
  b.trgMask.assign(n * len, 1.f);
  b.srcWords = b.trgWords = n * len;
  return b;
}

std::vector<size_t> fitBatchSentences(const Options& options, size_t srcVocab, size_t trgVocab, size_t step,
                                      size_t devicesPerBatch) {
  size_t workspace = size_t(options.get<int>("workspace")) << 20;
  size_t maxLength = size_t(options.get<int>("max-length"));
  std::unique_ptr<EncoderDecoder> model = createModel(options, srcVocab, trgVocab);
  ExpressionGraph graph(cpuDevice(0), 1, 0);  // shapes only: it allocates nothing but a small first chunk
  // CPU devices with bfloat16 products keep their products' operands in bfloat16 for backward
  if(devicesFromOptions(options).front().type == DeviceType::cpu)
    graph.setProductType(productTypeFromOptions(options, {}));
  bool weighted = !options.get<std::string>("data-weighting").empty();
  bool aligned = options.get<std::string>("guided-alignment") != "none";
  auto fits = [&](size_t n, size_t len) {
    graph.clear();
    Batch probe = fitProbeBatch(n, len);
    if(weighted)  // the weights' product is part of the training graph (Marian's probe has them too)
      probe.trgWeights.assign(n * len, 1.f);
    for(size_t s = 0; aligned && s < n; ++s)  // two points a target word, as Marian's probe (its cost's graph)
      for(size_t t = 0; t < len; ++t)
        for(size_t src : {t, (t + 1) % len})
          probe.guidedAlignment.push_back(Batch::AlignmentLink{int(s), int(src), int(t), 0.5f});
    Expr ce = model->loss(graph, probe, /*training=*/true);
    Expr cost = ce * 1.f;  // as DeviceWorker scales it and keeps both
    return graph.workspaceBytes({ce, cost}, /*withBackward=*/true) <= workspace;
  };
  LOG(info, "[batching] Collecting statistics for batch fitting with step size {}", step);
  std::vector<size_t> sentences;
  size_t upper = 1;  // a longer length fits no more sentences than a shorter one
  for(size_t len = step; len < maxLength + step; len += step) {
    size_t l = std::min(len, maxLength);
    ABORT_IF(!fits(1, l),
             "--mini-batch-fit: --workspace {} MB does not hold the training step of one sentence of {} tokens "
             "(--max-length {}): raise --workspace or lower --max-length",
             workspace >> 20, l, maxLength);
    if(sentences.empty())
      while(fits(upper * 2, l))
        upper *= 2;
    size_t lo = 1, hi = sentences.empty() ? upper * 2 : upper;  // fits(lo); above hi does not
    while(lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if(fits(mid, l))
        lo = mid;
      else
        hi = mid - 1;
    }
    upper = lo;
    sentences.push_back(lo * devicesPerBatch);
    LOG(debug, "[batching] length {}: {} sentences per device", l, lo);
  }
  LOG(info, "[batching] Done: {} sentences of {} tokens, {} of {} tokens per batch ({} MB of workspace per device)",
      sentences.front(), std::min(step, maxLength), sentences.back(), maxLength, workspace >> 20);
  return sentences;
}

}  // namespace marian
