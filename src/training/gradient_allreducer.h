#pragma once
// defines: marian::GradientAllreducer — the step of synchronous SGD across MPI ranks (seeds
// 000-003): every rank's summed gradient goes through one allreduce algorithm, whole, or as its
// top-k (--compression-density) with what was not sent kept as the rank's residual and added to
// its next gradient. Global top-k schemes (gtopk, oktopk) also put back what they did not select.
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce.h"
#include "comm/topk_selection.h"
#include "common/options.h"

namespace marian {

class GradientAllreducer {
public:
  GradientAllreducer(const Options& options, MpiTransport& transport, size_t n, uint64_t seed);
  // grads (n values) becomes the sum over ranks of what each rank sent; identical on every rank.
  void reduce(std::vector<float>& grads);
  // The same for a gradient held as consecutive shards on the node's devices (GPUs): with
  // compression each shard selects its top entries on its device (residual there too), so only
  // the selection crosses to the host; the sum is scattered back into the shards.
  void reduce(const std::vector<Tensor>& shards);
  // bytes on the wire since the last take
  AllreduceBytes takeBytes() { return algorithm_->takeBytes(); }

private:
  size_t keptOf(size_t n) const;

  std::unique_ptr<Allreduce> algorithm_;
  size_t n_;
  double density_;
  TopkMethod method_;
  int reuseEvery_;
  uint64_t seed_;
  std::unique_ptr<TopkSelector> selector_;                 // host gradients, when density < 1
  std::vector<std::unique_ptr<TopkSelector>> onDevices_;   // one per shard of device gradients
};

// Checks the options of synchronous SGD across ranks (also on one rank, so typos never pass).
void validateAllreduceOptions(const Options& options);

}  // namespace marian
