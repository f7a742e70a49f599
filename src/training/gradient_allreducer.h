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
  // bytes on the wire since the last take
  AllreduceBytes takeBytes() { return algorithm_->takeBytes(); }

private:
  std::unique_ptr<Allreduce> algorithm_;
  double density_;
  std::unique_ptr<TopkSelector> selector_;  // when density < 1
};

// Checks the options of synchronous SGD across ranks (also on one rank, so typos never pass).
void validateAllreduceOptions(const Options& options);

}  // namespace marian
