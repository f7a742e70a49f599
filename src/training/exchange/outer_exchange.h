#pragma once
// defines: marian::OuterExchange — how OuterRounds (outer_rounds.h) averages the ranks'
// pseudo-gradients of a fragment once a round, chosen once from the options:
//   whole, in fp32, by a ring allreduce (the default);
//   quantized (--outer-quantize-bits 8 or 4): QuantizedAllreduce, a scale per 256 values and an
//     integer code a value, error feedback on each rank and on each chunk's owner (INTELLECT-1's
//     int8 pseudo-gradients, Streaming DiLoCo's 4 bits);
//   signs (--outer-quantize-bits 1): OneBitAllreduce, a sign a value and the mean |x| of each
//     segment (every parameter's values, in blocks of 256), error feedback as quantized
//     (EF-SignSGD's scale; SparseLoCo sends its pseudo-gradients in 2 bits);
//   sparse (--outer-density d < 1): each rank sends its d n values largest in magnitude of its
//     pseudo-gradient plus what it held back in earlier rounds (error feedback, SparseLoCo,
//     Sarfi et al. 2025), summed exactly by a sparse allreduce.
// Every rank gets the same mean. Their messages go on the transport's `outer` channel, so that
// an exchange may run on a thread of its own beside the training thread's collectives. What the
// exchanges hold back is saved in the checkpoint (saveHeldBack): each rank's residual as
// "outer-residual.rankR" (codec_checkpoint.h; on another rank count rank 0 carries the saved
// ranks' sum, scaled as a term of the mean), the owners' quantization errors as
// "outer-server-error" (global layout). A checkpoint of another scheme has neither: they start
// at zero.
#include <memory>
#include <vector>

#include "common/equal_split.h"
#include "common/options.h"
#include "comm/transport.h"
#include "optimizers/model_state.h"

namespace marian {

class OuterExchange {
public:
  // What an exchange of n values holds back between rounds: this rank's residual (error
  // feedback) and, where this rank owns a chunk of the mean, the owner's error there (zeros
  // elsewhere). Empty vectors: nothing of that kind.
  struct HeldBack {
    std::vector<float> residual, ownerError;
  };

  virtual ~OuterExchange() = default;
  // delta: this rank's pseudo-gradient (n values) becomes the mean over ranks. Collective.
  virtual void average(std::vector<float>& delta) = 0;
  virtual HeldBack heldBack() const { return {}; }
  // n values each (zeros where a checkpoint had none).
  virtual void setHeldBack(HeldBack heldBack) {}
};

// The exchange the options name, for the values of `fragment` of the global layout, whose
// parameters start at parameterStarts (sorted global offsets; 1-bit segments never cross one).
std::unique_ptr<OuterExchange> createOuterExchange(const Options& options, Transport& transport, Range fragment,
                                                   const std::vector<size_t>& parameterStarts);
// Checks --outer-quantize-bits and --outer-density (with or without --local-steps: typos never pass).
void validateOuterExchangeOptions(const Options& options);

// Collective: what the exchanges of the fragments (exchanges[p] serves fragments[p] of the
// global layout) hold back, into rank 0's `state`; and back from a checkpoint.
void saveHeldBack(Transport& transport, const std::vector<std::unique_ptr<OuterExchange>>& exchanges,
                  const std::vector<Range>& fragments, ModelState& state);
void restoreHeldBack(const ModelState& state, Transport& transport,
                     const std::vector<std::unique_ptr<OuterExchange>>& exchanges, const std::vector<Range>& fragments);

}  // namespace marian
