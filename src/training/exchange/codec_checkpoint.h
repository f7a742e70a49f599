#pragma once
// defines: the checkpoint arrays every residual-keeping codec shares: each rank's residual in the
// global layout as "allreduce-residual.rankR" (rank 0 writes them), and a rank's own residual
// read back, summed over the saved ranks into rank 0's when the rank count changed.
#include <string>
#include <vector>

#include "comm/transport.h"
#include "optimizers/model_state.h"

namespace marian {

// Every gathered rank's extra "residual" as "allreduce-residual.rankR" (rank 0).
void saveRankResiduals(const std::vector<ModelState>& all, ModelState& state);
// This rank's residual of n values from a checkpoint: its own on the same rank count, otherwise
// on rank 0 the saved ranks' sum times otherLayoutScale (logged, naming `what`) and zeros elsewhere.
std::vector<float> rankResidual(const ModelState& state, const Transport& transport, size_t n, float otherLayoutScale,
                                const char* what);

}  // namespace marian
