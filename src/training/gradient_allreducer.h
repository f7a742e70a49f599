#pragma once
// defines: marian::GradientAllreducer — the step of synchronous SGD across MPI ranks (seeds
// 000-003): every rank's summed gradient goes through one allreduce algorithm, whole, or as its
// top-k (--compression-density) with what was not sent kept as the rank's residual and added to
// its next gradient. Global top-k schemes (gtopk, oktopk) also put back what they did not select.
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce/algorithms.h"
// Not needed here: sync_graph_group.cpp finds MpiTransport through this header. Remove it once
// that file includes comm/mpi_transport.h itself.
#include "comm/mpi_transport.h"
#include "comm/topk_selection.h"
#include "common/options.h"

namespace marian {

class GradientAllreducer {
public:
  GradientAllreducer(const Options& options, Transport& transport, size_t n, uint64_t seed);
  // The node's gradient, held as consecutive shards (n values in all) on the node's devices,
  // becomes the sum over ranks of what each rank sent; identical on every rank. With compression
  // each shard keeps its own residual and selects its own top entries (density x its size)
  // where it lives, so from a GPU only the selection crosses to the host; the sum is scattered
  // back into the shards.
  void reduce(const std::vector<Tensor>& shards);
  // bytes on the wire since the last take, as the transport counted them (not for dense)
  AllreduceBytes takeBytes() { return algorithm_->takeBytes(); }

private:
  size_t keptOf(size_t n) const;

  std::unique_ptr<Allreduce> algorithm_;
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
