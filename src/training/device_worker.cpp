#include "training/device_worker.h"

#include <cmath>

#include "common/timeline.h"
#include "graph/operators.h"
#include "tensors/kernels.h"

namespace marian {

DeviceWorker::DeviceWorker(Device device, const Options& options, size_t srcVocab, size_t trgVocab,
                           uint64_t seed)
    : graph_(std::make_unique<ExpressionGraph>(device, seed, size_t(options.get<int>("workspace")))),
      model_(createModel(options, srcVocab, trgVocab)) {}

double DeviceWorker::computeGradients(const Batch& batch, float costScale, uint64_t randomSeed) {
  graph_->clear();
  graph_->setRandomSeed(randomSeed);
  Expr ce = model_->loss(*graph_, batch, /*training=*/true);
  Expr cost = costScale == 1.f ? ce : ce * costScale;
  {
    timeline::Span span("forward", "compute");
    graph_->forward();
  }
  timeline::Span span("backward", "compute");
  graph_->backward(cost);
  return kernels::toHost(ce->val())[0];
}

void DeviceWorker::initialize(const Batch& sample) {
  graph_->clear();
  model_->loss(*graph_, sample, /*training=*/false);
  graph_->params().allocate();
  graph_->clear();
}

}  // namespace marian
