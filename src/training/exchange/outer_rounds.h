#pragma once
// defines: marian::OuterRounds — training with local steps across ranks (DiLoCo, Douillard et
// al. 2023): each rank takes --local-steps H updates of its own (the configured optimizer on its
// own batches, its devices synchronised as in sync-SGD), then the ranks average their
// pseudo-gradients (the round's start minus their parameters) in one exchange and every
// rank takes the same outer step (OuterOptimizer, --outer-optimizer) and starts the next round
// from its result. The ranks send n floats every H updates where sync-SGD sends n every update,
// fewer where the exchange compresses them (OuterExchange: quantized or sparse, error feedback).
// A round ends after updates H, 2H, ... (the update's number is the round's position), so a
// checkpoint adds only the outer state, extras "outer-start" and "outer-momentum", and what the
// exchange holds back (the ranks' own parameters and optimizer states are LocalReplicas' to keep).
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/options.h"
#include "training/exchange/outer_exchange.h"
#include "optimizers/model_state.h"
#include "optimizers/outer_optimizer.h"

namespace marian {

class OuterRounds {
public:
  // ranges: this rank's shards of the parameters, consecutive from 0; values: theirs now (the
  // first round's start, the same on every rank).
  OuterRounds(const Options& options, Transport& transport, const std::vector<Range>& ranges,
              const std::vector<std::vector<float>>& values);

  // --local-steps, checked against the options it cannot be combined with (0: off).
  static uint64_t localSteps(const Options& options);

  // Whether update (0-based) is the last of a round.
  bool endsRound(uint64_t update) const { return (update + 1) % steps_ == 0; }
  // The outer step: this rank's `values` (per shard) become the next round's start, the same
  // on every rank. Collective.
  void step(std::vector<std::vector<float>>& values);
  // The outer allreduce's bytes since the last take.
  AllreduceBytes takeBytes() { return exchange_->takeBytes(); }

  // The outer state into `state`'s extras (the global layout). Collective.
  void saveTo(ModelState& state) const;
  // The outer state of a checkpoint; one without it (saved without local steps) starts a round
  // from its parameters (state.values: the ranks' mean where their copies differ), no momentum.
  void restoreFrom(const ModelState& state);

private:
  Transport& transport_;
  uint64_t steps_;
  std::vector<Range> ranges_;
  std::vector<OuterOptimizer> shards_;
  std::unique_ptr<OuterExchange> exchange_;
};

}  // namespace marian
