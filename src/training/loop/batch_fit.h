#pragma once
// defines: fitBatchSentences — Marian's --mini-batch-fit: for each sentence length up to
// --max-length in steps of --mini-batch-fit-step, the most sentences whose training step (forward
// and backward) fits in --workspace MB of one device. Each candidate size is judged from the
// training graph's shapes alone (ExpressionGraph::workspaceBytes, nothing is computed), so the
// binary search over batch sizes costs graph building only.
#include <cstddef>
#include <vector>

#include "common/options.h"
#include "data/batch.h"

namespace marian {

// [k]: the most sentences of (k + 1) * step tokens (source and target) that fit one device's
// workspace, times `devicesPerBatch` (the devices a batch is split over: sync-SGD's). An error
// when not even one sentence of --max-length tokens fits.
std::vector<size_t> fitBatchSentences(const Options& options, size_t srcVocab, size_t trgVocab, size_t step,
                                      size_t devicesPerBatch);
// The batch the fit probes with: n sentences of `len` tokens on both sides, all real.
Batch fitProbeBatch(size_t n, size_t len);

}  // namespace marian
