#pragma once
// defines: marian::GraphGroup — how the devices of one node train together: one interface,
// chosen by options (DESIGN.md §6): sync (--sync-sgd, or a single device: the singleton), async
// (several devices without --sync-sgd) and multi-node (--multi-node: the sharded parameter server
// across ranks, multinode_graph_group.cpp).
#include <memory>
#include <vector>

#include "comm/transport.h"
#include "common/error.h"
#include "common/options.h"
#include "data/batch.h"
#include "graph/parameters.h"
#include "optimizers/model_state.h"

namespace marian {

struct StepStats {
  double ceSum = 0;  // summed cost (cross-entropy of the target labels, and --guided-alignment's)
  size_t labels = 0, sentences = 0;  // of this rank's batch
  size_t alignmentPoints = 0;        // its --guided-alignment points (the display counts them as labels)
  bool skipped = false;  // cost scaling skipped the update (its gradient, or cost, was not finite)
  // the L2 norm of the gradient the optimizer stepped with, per label of the update (Marian's
  // gNorm); 0 where none is computed (asynchronous updates, as Marian's)
  double gradientNorm = 0;
  // A batch's counts, with its summed cost
  static StepStats of(const Batch& batch, double cost) {
    return {cost, batch.trgWords, size_t(batch.sentences), batch.guidedAlignment.size()};
  }
};

class GraphGroup {
public:
  virtual ~GraphGroup() = default;
  // Declares and allocates the parameters on every device (from a sample batch).
  virtual void initialize(const Batch& sample) = 0;
  // One optimizer step over `batch` with learning rate lr; `update` is its 0-based index;
  // jobLabels: the update's target labels on every rank in lockstep, which --normalize-gradient
  // divides by (0: this rank's batch's).
  virtual StepStats update(const Batch& batch, uint64_t update, float lr, uint64_t jobLabels = 0) = 0;
  // Waits for work in flight (async); afterwards values() are those of all updates so far.
  virtual void finish() {}

  // The parameter layout (names, shapes, offsets), the same on every device.
  virtual const Parameters& layout() = 0;
  // Host copies of the whole flat parameter buffer: smoothed = the exponential moving average
  // when --exponential-smoothing is on (what is validated and saved as the model).
  virtual std::vector<float> values(bool smoothed) = 0;
  // Everything that continues the run, gathered into the global layout on rank 0 (other ranks
  // return an empty state). Groups in lockstep call it on every rank at the same update.
  virtual ModelState saveState() = 0;
  // Installs a saved state on every rank, re-sharding it when it was saved on other ranks or
  // devices (state.ranks, state.devices); communication state that cannot carry over exactly is
  // redistributed without loss and said so in the log. A state of another size is an error (the
  // one check of a checkpoint's size; ModelFolder::checkFits compares names and shapes).
  void restoreState(const ModelState& state) {
    ABORT_IF(state.n != layout().totalSize(),
             "The checkpoint holds {} parameters but the model configured has {}: were the model options changed?",
             state.n, layout().totalSize());
    restore(state);
  }

  // Collective in lockstep groups before rank 0 validates: where the ranks' copies of the
  // parameters differ (--local-gradients), values() then gives their mean (until the next
  // update); training is not changed by it.
  virtual void prepareValidation() {}
  // Frees the devices' activation memory between updates, so that validation and saving do not
  // add theirs to it (the next update takes it again). Groups whose devices compute between the
  // trainer's calls (async) keep theirs.
  virtual void releaseWorkspaces() {}

  // Multi-node: this process's rank among `ranks` nodes (one node: 0 of 1).
  virtual int rank() const { return 0; }
  virtual int ranks() const { return 1; }
  // Whether every rank must make the same number of updates (synchronous SGD across ranks).
  virtual bool ranksInLockstep() const { return false; }
  // Ranks in lockstep: the updates between the trainer's agreements on what they trained
  // (LockstepAgreement); 1: before every update. Local steps meet only once a round.
  virtual uint64_t updatesPerAgreement() const { return 1; }
  // Update `update` (0-based) on a rank whose streamed epoch ran out mid-round while the others
  // train on (updatesPerAgreement() > 1): it takes no step but keeps the round's exchanges.
  virtual void idleUpdate(uint64_t update);
  // Ranks not in lockstep (the parameter server): rank 0, which validates, stops early and saves,
  // tells the others when it ends early (early stopping, a signal), and they end after the
  // update they are in (endAnnounced), instead of training on to their own end while it waits.
  virtual void announceEnd() {}
  virtual bool endAnnounced() { return false; }
  // Whether resetOptimizerStatistics can reset every optimizer the training's updates go through
  // (--lr-decay-reset-optimizer, --no-optimizer-reload): one synchronous group, whose shards all
  // reset at the same update, and no scheme that keeps its own view of Adam's moments.
  virtual bool resetsOptimizer() const { return false; }
  virtual void resetOptimizerStatistics() { ABORT("This training mode cannot reset its optimizers' statistics"); }
  // What the display line adds since the last call (multi-node: bytes, utilisation, staleness).
  virtual std::string statusLine() { return ""; }

protected:
  // restoreState's work, given a state of this model's size.
  virtual void restore(const ModelState& state) = 0;
};

// ranks: the MPI ranks the process runs among (null: a single process).
std::unique_ptr<GraphGroup> createGraphGroup(const Options& options, size_t srcVocab, size_t trgVocab, uint64_t seed,
                                             Transport* ranks);

// Sentences [begin, end) of device d of n when a batch of `sentences` is split evenly.
inline std::pair<int, int> deviceSlice(int sentences, size_t d, size_t n) {
  Range r = equalPart(size_t(sentences), d, n);
  return {int(r.offset), int(r.end())};
}

// Device d of n's share of each mini-batch in `batch` (several with --optimizer-delay): its
// deviceSlice of each; empty shares left out.
std::vector<Batch> deviceShare(const Batch& batch, size_t d, size_t n);

// What the batch's summed cross-entropy is multiplied by before backward. As in Marian, the
// gradient is the sum's whatever --cost-type shows (Adam then weighs every label alike, where a
// per-update mean weighs every update alike); --normalize-gradient divides it by the update's
// labels: the batch's, or with sync-SGD across ranks every rank's, as Marian's sum over ranks.
float gradientScale(bool normalizeGradient, uint64_t labels);

// " : Sent X/up : Recv Y/up" of a status line: the bytes of `updates` updates, per update.
std::string trafficPerUpdate(double sent, double received, uint64_t updates);

}  // namespace marian
