#pragma once
// defines: marian::OuterExchange — how OuterRounds (outer_rounds.h) averages the ranks'
// pseudo-gradients once a round, chosen once from the options:
//   whole, in fp32, by a ring allreduce (the default);
//   quantized (--outer-quantize-bits 8 or 4): QuantizedAllreduce, a scale per 256 values and an
//     integer code a value, error feedback on each rank and on each chunk's owner (INTELLECT-1's
//     int8 pseudo-gradients, Streaming DiLoCo's 4 bits);
//   sparse (--outer-density d < 1): each rank sends its d n values largest in magnitude of its
//     pseudo-gradient plus what it held back in earlier rounds (error feedback, SparseLoCo,
//     Sarfi et al. 2025), summed exactly by a sparse allreduce.
// Every rank gets the same mean. What an exchange holds back is saved in the checkpoint: each
// rank's residual as "outer-residual.rankR" (codec_checkpoint.h; on another rank count rank 0
// carries the saved ranks' sum, scaled as a term of the mean), the owners' quantization errors
// as "outer-server-error" (global layout). A checkpoint of another scheme has neither: they
// start at zero.
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/options.h"
#include "optimizers/model_state.h"

namespace marian {

class OuterExchange {
public:
  virtual ~OuterExchange() = default;
  // delta: this rank's pseudo-gradient (n values) becomes the mean over ranks. Collective.
  virtual void average(std::vector<float>& delta) = 0;
  // Bytes this rank sent and received since the last take.
  virtual AllreduceBytes takeBytes() = 0;
  // Collective: what the exchange holds back into rank 0's `state`; and back.
  virtual void saveTo(ModelState& state) {}
  virtual void restoreFrom(const ModelState& state) {}
};

// The exchange the options name, for n values.
std::unique_ptr<OuterExchange> createOuterExchange(const Options& options, Transport& transport, size_t n);
// Checks --outer-quantize-bits and --outer-density (with or without --local-steps: typos never pass).
void validateOuterExchangeOptions(const Options& options);

}  // namespace marian
