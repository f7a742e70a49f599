#pragma once
// defines: the checkpoint arrays every residual-keeping exchange shares: each rank's residual in
// the global layout as "PREFIX.rankR" (rank 0 writes them), and a rank's own residual read back,
// summed over the saved ranks into rank 0's when the rank count changed. The gradient codecs'
// prefix is "allreduce-residual", the outer exchange's (local steps) "outer-residual": the one
// never reads the other's.
#include <string>
#include <vector>

#include "comm/transport.h"
#include "optimizers/model_state.h"

namespace marian {

constexpr const char* kGradientResiduals = "allreduce-residual";
constexpr const char* kOuterResiduals = "outer-residual";
// 1-bit Adam's servers' errors (n values, every rank's chunk); a checkpoint that holds them holds
// momentum errors, not gradient residuals, under kGradientResiduals.
constexpr const char* kOneBitServerErrors = "onebit-server-error";
// 0/1 Adam's servers' errors of its 1-bit gradients (before the freeze; n values, every rank's
// chunk), beside its ranks' errors as gradient residuals: the sum owes them times the saved ranks.
constexpr const char* kZeroOneServerErrors = "zero-one-server-error";

// Whether the checkpoint's kGradientResiduals are in the units a codec keeps (momentum: 1-bit
// Adam's errors; otherwise gradients), or absent. When not (a resume on another scheme), rank 0
// logs that `what` start at zero.
bool residualsInUnitsOf(const ModelState& state, bool momentum, const Transport& transport, const char* what);

// Whether the checkpoint holds ranks' residuals under PREFIX.
bool hasRankResiduals(const ModelState& state, const char* prefix = kGradientResiduals);
// Every gathered rank's extra "residual" as "PREFIX.rankR" (rank 0).
void saveRankResiduals(const std::vector<ModelState>& all, ModelState& state, const char* prefix = kGradientResiduals);
// This rank's residual of n values from a checkpoint: its own on the same rank count, otherwise
// on rank 0 the saved ranks' sum times otherLayoutScale (logged, naming `what`) and zeros elsewhere.
std::vector<float> rankResidual(const ModelState& state, const Transport& transport, size_t n, float otherLayoutScale,
                                const char* what, const char* prefix = kGradientResiduals);

// A checkpoint of several ranks resumed on one, which does not compress: what the saved ranks held
// back joins its first gradient, as error feedback would have added it to their next one. Gradient
// residuals are summed (0/1 Adam's servers' errors R-fold: the sum is R times the mean they
// correct); 1-bit Adam's momentum errors (the workers' mean plus the servers') become the gradient
// whose momentum step adds them, 1/(1 - beta1) times as large. Empty: nothing held back.
struct HeldBackOnOneRank {
  std::vector<float> gradient;
  bool wasMomentum = false;  // 1-bit Adam's errors
  static HeldBackOnOneRank from(const ModelState& saved, float beta1);
  // Saved before the first update took it: back into a checkpoint in the units it came in.
  void saveTo(ModelState& state, float beta1) const;
};

}  // namespace marian
