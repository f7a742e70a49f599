#include "training/graph_groups/device_worker.h"

#include <cmath>
#include <mutex>

#include "common/format.h"
#include "common/logging.h"
#include "common/timeline.h"
#include "graph/operators.h"
#include "tensors/kernels.h"
#include "training/graph_groups/dropout_seeds.h"
#include "training/graph_groups/mixed_precision.h"

namespace marian {

DeviceWorker::DeviceWorker(Device device, const Options& options, size_t srcVocab, size_t trgVocab,
                           uint64_t seed)
    : graph_(std::make_unique<ExpressionGraph>(device, seed, size_t(options.get<int>("workspace")))),
      model_(createModel(options, srcVocab, trgVocab)), pretrained_(options.get<std::string>("pretrained-model")) {
  graph_->setProductType(productTypeFromOptions(options, {device}));
}

double DeviceWorker::computeGradients(const std::vector<Batch>& pieces, float costScale, uint64_t randomSeed,
                                      const ExpressionGraph::GradientReady& ready,
                                      const ExpressionGraph::LookupsApart& lookupsApart) {
  double ceSum = 0;
  for(size_t p = 0; p < pieces.size(); ++p) {
    graph_->clear();
    graph_->setRandomSeed(pieceRandomSeed(randomSeed, p));
    Expr ce = model_->loss(*graph_, pieces[p], /*training=*/true);
    Expr cost = costScale == 1.f ? ce : ce * costScale;
    {
      timeline::Span span("forward", "compute");
      graph_->forward({ce, cost}, /*backwardFollows=*/true);
    }
    {
      timeline::Span span("backward", "compute");
      bool last = p + 1 == pieces.size();
      graph_->backward(cost, nullptr, /*accumulate=*/p > 0, last ? ready : nullptr, last ? lookupsApart : nullptr);
    }
    ceSum += kernels::toHost(ce->val())[0];
  }
  return ceSum;
}

void DeviceWorker::initialize(const Batch& sample) {
  graph_->clear();
  model_->loss(*graph_, sample, /*training=*/false);
  graph_->params().allocate();
  if(!pretrained_.empty()) {
    std::vector<std::string> drawn = graph_->params().loadMatching(pretrained_);
    static std::once_flag logged;  // every device loads the same file
    std::call_once(logged, [&] {
      LOG(info, "[training] Initializing model weights with pre-trained model {}: {} of {} parameters{}", pretrained_,
          graph_->params().entries().size() - drawn.size(), graph_->params().entries().size(),
          drawn.empty() ? std::string() : format(", the others drawn as usual ({}{})", drawn.front(),
                                                drawn.size() > 1 ? format(" and {} more", drawn.size() - 1) : ""));
    });
  }
  for(bool apart : {false, true})
    gradientOrder_[apart] = graph_->gradientOrder(apart);
  lookupTables_ = graph_->lookupTables();
  graph_->clear();
}

}  // namespace marian
