#pragma once
// defines: marian::GradientAllreducer — the step of synchronous SGD across MPI ranks: every
// rank's summed gradient, cut into buckets (sets of ranges of the flat layout,
// training/exchange/gradient_buckets.h) that are reduced one by one, each as soon as backward
// has finished it (the sync group's communication thread), through one allreduce algorithm per
// bucket (--sparse-allreduce; each bucket has its own algorithm state) and one communication
// scheme, the codec (bucket_codec.h: dense, top-k with residuals, PowerSGD, 1-bit or 0/1 Adam),
// chosen once from the options. A dense sum is the same whatever the buckets.
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "comm/compression.h"
#include "common/options.h"
#include "graph/parameters.h"
#include "optimizers/adam_moments.h"
#include "optimizers/model_state.h"
#include "training/exchange/bucket_codec.h"
#include "training/exchange/bucket_layout.h"

namespace marian {

class GradientAllreducer {
public:
  // shards: the node's gradient shards as reduce() will get them (their sizes and devices);
  // buckets: disjoint sets of ranges that cover the n values of the shards (empty: one bucket);
  // parameters: their shapes (PowerSGD's matrices, 1-bit's scales per parameter); moments: where
  // 1-bit Adam reads the optimizer's momentum.
  GradientAllreducer(const Options& options, Transport& transport, const std::vector<Tensor>& shards,
                     uint64_t seed, const std::vector<GradientBucket>& buckets = {},
                     const Parameters* parameters = nullptr, const AdamMoments& moments = AdamMoments());
  GradientAllreducer(const GradientAllreducer&) = delete;  // the codec holds the layout's address
  GradientAllreducer& operator=(const GradientAllreducer&) = delete;
  // The node's gradient, held as consecutive shards (n values in all) on the node's devices,
  // becomes the sum over ranks of what each rank sent; identical on every rank. reduce() does
  // every bucket in order.
  void reduce(const std::vector<Tensor>& shards);
  // The same for bucket b's values only; collective: every rank reduces the same bucket.
  void reduceBucket(size_t b, const std::vector<Tensor>& shards);
  // The update (0-based) the next reductions belong to (warm-ups and schedules follow it).
  void setStep(uint64_t update) { step_ = update; }
  // Whether this step's result gives 1-bit Adam's averaged momentum, each rank's own gradient
  // clipped before (--clip-norm): not a gradient to clip again.
  bool clippedBeforeTheSum() const { return codec_->clippedBeforeTheSum(step_); }
  // Whether the sum is approximate (top-k, PowerSGD or 1 bit), with residuals.
  bool compresses() const { return codec_->compresses(); }
  const Compression& compression() const { return compression_; }
  size_t buckets() const { return layout_.buckets(); }
  const GradientBucket& bucket(size_t b) const { return layout_.bucket(b); }
  // How many of the updates since the last take went through MPI_Allreduce (dense steps, or all
  // of them), whose messages the transport cannot count.
  uint64_t takeUpdatesNotCounted();

  // Collective: every rank's residuals (and selector counts) go to rank 0's `state`, as
  // extras "allreduce-residual.rankR" (n values in the global layout) and counters.
  void saveTo(ModelState& state) { codec_->saveTo(state); }
  // Takes this rank's residuals back; from a checkpoint of another rank or device count, the
  // residuals of all saved ranks are summed into rank 0's (what every rank would have sent is
  // sent once: the sum over ranks is what the allreduce applies), and the log says so.
  void restoreFrom(const ModelState& state) { codec_->restoreFrom(state); }

private:
  BucketLayout layout_;
  Compression compression_;
  std::vector<std::unique_ptr<Allreduce>> algorithms_;  // one per bucket (their state is theirs)
  std::unique_ptr<BucketCodec> codec_;
  uint64_t step_ = 0;
  uint64_t updatesNotCounted_ = 0, lastStepNotCounted_ = uint64_t(-1);
};

}  // namespace marian
