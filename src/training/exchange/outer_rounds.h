#pragma once
// defines: marian::OuterRounds — training with local steps across ranks (DiLoCo, Douillard et
// al. 2023; streamed as Streaming DiLoCo, Douillard et al. 2025): each rank takes --local-steps
// H updates of its own (the configured optimizer on its own batches, its devices synchronised as
// in sync-SGD); then the ranks average their pseudo-gradients (the outer parameters minus their
// own) in one exchange and every rank takes the same outer step (OuterOptimizer,
// --outer-optimizer) and continues from its result. The ranks send n floats every H updates
// where sync-SGD sends n every update, fewer where the exchange compresses them (OuterExchange:
// quantized or sparse, error feedback).
//
// Streamed (--outer-fragments F, FragmentSchedule): the parameters in F fragments, each with its
// own outer state and exchange, each sent after its own update of the round. With --outer-delay
// tau the exchange runs on a thread of its own (SerialWorker) beside the next tau updates, then
// the fragment is merged: the outer step's result mixed with what the rank made of the fragment
// meanwhile, alpha local + (1 - alpha) outer (--outer-merge-alpha). Without a delay the exchange
// is waited for at once and the fragment becomes the outer step's result.
//
// The round's position is the update count, so a checkpoint adds the outer state (extras
// "outer-start", "outer-momentum"), what the exchanges hold back, and the means of the fragments
// in flight ("outer-in-flight", with the schedule and update count as counters): a save waits
// for the exchanges under way and keeps their results for the updates they are merged after.
// The ranks' own parameters and optimizer states are LocalReplicas' to keep.
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/options.h"
#include "common/serial_worker.h"
#include "optimizers/model_state.h"
#include "optimizers/outer_optimizer.h"
#include "training/exchange/fragment_schedule.h"
#include "training/exchange/outer_exchange.h"

namespace marian {

class OuterRounds {
public:
  // How OuterRounds reads and writes this rank's parameters (wherever its devices hold them), a
  // range of the global layout at a time.
  struct ParameterAccess {
    std::function<std::vector<float>(Range)> read;
    std::function<void(Range, const std::vector<float>&)> write;
  };

  // start: the parameters now (the first round's start, the same on every rank); parameterStarts:
  // where each parameter begins in it (sorted; 1-bit exchanges keep their scales within one).
  OuterRounds(const Options& options, Transport& transport, const std::vector<float>& start,
              const std::vector<size_t>& parameterStarts = {0});
  // Runs the exchanges still posted (collective: every rank posted the same), then stops.
  ~OuterRounds();

  // --local-steps, checked against the options it cannot be combined with (0: off).
  static uint64_t localSteps(const Options& options);
  const FragmentSchedule& schedule() const { return schedule_; }

  // After update `update` (0-based): sends the fragments whose round ends there and merges those
  // whose exchange is due. Returns whether it wrote parameters. Collective.
  bool afterUpdate(uint64_t update, const ParameterAccess& parameters);
  // The outer exchanges' bytes since the last take (the `outer` channel's).
  AllreduceBytes takeBytes();

  // The outer state into `state`'s extras (the global layout), once the exchanges under way are
  // done. Collective.
  void saveTo(ModelState& state);
  // The outer state of a checkpoint; one without it (saved without local steps) starts a round
  // from its parameters (state.values: the ranks' mean where their copies differ), no momentum.
  void restoreFrom(const ModelState& state);
  // For a run without local steps (or on one rank): a checkpoint with fragments in flight is an
  // error naming the schedule it needs (their outer steps would be lost); any other resumes.
  static void refuseFragmentsInFlight(const ModelState& state);

private:
  struct InFlight {
    size_t fragment;
    uint64_t mergeAfter;                  // the update count it is merged after
    std::shared_ptr<std::vector<float>>  // its pseudo-gradient, then the ranks' mean of it
        delta;
    uint64_t ticket = 0;  // its job on worker_
    bool done = false;    // the mean is there (waited for, or from a checkpoint)
  };
  // fragment p's outer step on the ranks' mean pseudo-gradient; its parameters become the result
  // (mixed with the rank's own when `mix`)
  void merge(size_t p, const std::vector<float>& mean, bool mix, const ParameterAccess& parameters);

  Transport& transport_;
  FragmentSchedule schedule_;
  float mergeAlpha_;
  size_t n_;
  std::vector<Range> fragments_;
  std::vector<OuterOptimizer> outer_;                       // per fragment
  std::vector<std::unique_ptr<OuterExchange>> exchanges_;   // per fragment
  std::deque<InFlight> inFlight_;                           // in the order they merge
  uint64_t updates_ = 0;                                    // updates done
  ChannelBytes taken_;
  std::unique_ptr<SerialWorker> worker_;  // --outer-delay > 0: the exchanges' thread; last: stops first
};

}  // namespace marian
