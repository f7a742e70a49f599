#pragma once
// defines: marian::GradientAllreducer — the step of synchronous SGD across MPI ranks (seeds
// 000-003): every rank's summed gradient goes through one allreduce algorithm, whole, or as its
// top-k (--compression-density) with what was not sent kept as the rank's residual and added to
// its next gradient. Global top-k schemes (gtopk, oktopk) also put back what they did not select.
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce/algorithms.h"
#include "comm/topk_selection.h"
#include "common/options.h"
#include "optimizers/model_state.h"

namespace marian {

class GradientAllreducer {
public:
  // shards: the node's gradient shards as reduce() will get them (their sizes and devices).
  GradientAllreducer(const Options& options, Transport& transport, const std::vector<Tensor>& shards,
                     uint64_t seed);
  // The node's gradient, held as consecutive shards (n values in all) on the node's devices,
  // becomes the sum over ranks of what each rank sent; identical on every rank. With compression
  // each shard keeps its own residual and selects its own top entries (density x its size)
  // where it lives, so from a GPU only the selection crosses to the host; the sum is scattered
  // back into the shards.
  void reduce(const std::vector<Tensor>& shards);
  // bytes on the wire since the last take, as the transport counted them (not for dense)
  AllreduceBytes takeBytes() { return algorithm_->takeBytes(); }

  // Collective: every rank's residuals (and selector counts) go to rank 0's `state`, as
  // extras "allreduce-residual.rankR" (n values in the global layout) and counters.
  void saveTo(ModelState& state);
  // Takes this rank's residuals back; from a checkpoint of another rank or device count, the
  // residuals of all saved ranks are summed into rank 0's (what every rank would have sent is
  // sent once: the sum over ranks is what the allreduce applies), and the log says so.
  // residualScale multiplies the summed residuals of another layout (see the sync group).
  void restoreFrom(const ModelState& state, float residualScale = 1.f);

private:
  size_t keptOf(size_t n) const;
  void createSelectors(const std::vector<Tensor>& shards);

  Transport& transport_;
  std::unique_ptr<Allreduce> algorithm_;
  std::vector<Range> shardRanges_;
  size_t n_;
  double density_;
  TopkMethod method_;
  int reuseEvery_;
  uint64_t seed_;
  std::vector<std::unique_ptr<TopkSelector>> selectors_;  // one per shard, when density < 1
  std::vector<float> dense_;                               // the host copy for dense allreduce
};

// Checks the options of synchronous SGD across ranks (also on one rank, so typos never pass).
void validateAllreduceOptions(const Options& options);

}  // namespace marian
