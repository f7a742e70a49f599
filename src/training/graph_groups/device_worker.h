#pragma once
// defines: marian::DeviceWorker — one device's replica of the model: its graph (with its own
// flat parameter and gradient buffers and workspace) and the forward/backward of a batch.
#include <memory>

#include "common/options.h"
#include "models/encoder_decoder.h"

namespace marian {

class DeviceWorker {
public:
  DeviceWorker(Device device, const Options& options, size_t srcVocab, size_t trgVocab, uint64_t seed);

  // Forward and backward of each of `pieces` (the mini-batches of one update, --optimizer-delay)
  // with the cost scaled by costScale; their gradients are summed in graph().params().grads().
  // Returns the summed cross-entropy (unscaled). randomSeed fixes the dropout masks (batchRandomSeed,
  // each piece's derived from it: training/graph_groups/dropout_seeds.h). `ready` is told, during
  // the last piece's backward, which parameters' gradients are final, and lookupsApart where the
  // embedding lookups of that backward may add instead (ExpressionGraph::backward).
  double computeGradients(const std::vector<Batch>& pieces, float costScale, uint64_t randomSeed,
                          const ExpressionGraph::GradientReady& ready = nullptr,
                          const ExpressionGraph::LookupsApart& lookupsApart = nullptr);
  // Declares and allocates the parameters (a forward pass of a one-sentence batch, no backward),
  // then installs those --pretrained-model has, when given.
  void initialize(const Batch& sample);
  // The order in which backward makes the parameters' gradients final (ExpressionGraph::
  // gradientOrder of the sample's graph), with the embedding lookups apart or not.
  const std::vector<size_t>& gradientOrder(bool lookupsApart) const { return gradientOrder_[lookupsApart]; }
  // The tables whose lookups can go apart (ExpressionGraph::lookupTables of the sample's graph).
  const std::vector<size_t>& lookupTables() const { return lookupTables_; }

  ExpressionGraph& graph() { return *graph_; }
  Parameters& params() { return graph_->params(); }
  Device device() const { return graph_->device(); }

private:
  std::unique_ptr<ExpressionGraph> graph_;
  std::unique_ptr<EncoderDecoder> model_;
  std::string pretrained_;
  std::vector<size_t> gradientOrder_[2];
  std::vector<size_t> lookupTables_;
};

}  // namespace marian
