#pragma once
// defines: marian::GradientAllreducer — the step of synchronous SGD across MPI ranks (seeds
// 000-003): every rank's summed gradient goes through one allreduce algorithm, whole, or as its
// top-k (--compression-density) with what was not sent kept as the rank's residual and added to
// its next gradient. Global top-k schemes (gtopk, oktopk) also put back what they did not select.
// The gradient may be cut into buckets (sets of ranges of the flat layout, training/gradient_buckets.h)
// that are reduced one by one, each as soon as backward has finished it (the sync group's
// communication thread):
// a dense sum is the same whatever the buckets; with compression each bucket selects density x
// its size, and each bucket has its own algorithm state (oktopk's regions and threshold).
// Compression is what src/comm/compression.h describes: a warm-up of the density, momentum
// correction, local clipping (per piece: its share of the threshold) and local gradients.
// Or, with --powersgd-rank r, each bucket's matrices go as rank-r factors with error feedback
// (comm/powersgd.h) through the algorithm's dense sum, after --powersgd-start dense updates.
// Or, with --onebit-adam, after --adam-freeze-variance-after dense updates the ranks average
// Adam's momentum in 1 bit a value and a scale per parameter or --onebit-block-size values
// (comm/allreduce/onebit.h): each rank's candidate
// beta1 m + (1 - beta1) g_rank (Adam's m, read where the optimizer keeps it), and the bucket
// becomes the gradient for which the optimizer's own momentum step gives the averaged momentum
// (--clip-norm clips each rank's gradient before it joins the candidate, not that gradient).
// With --onebit-update-direction the momentum goes in units of the frozen sqrt(v) (a floor at a
// 100th of its parameter's mean), so that sign and scale are the update's, m / sqrt(v)'s.
// With --zero-one-adam, before the freeze the gradient itself goes in 1 bit on the steps where
// the variance does not change (optimizers/variance_schedule.h), densely on the others.
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/onebit.h"
#include "comm/compression.h"
#include "comm/powersgd.h"
#include "comm/topk_selection.h"
#include "common/options.h"
#include "graph/parameters.h"
#include "optimizers/model_state.h"
#include "optimizers/variance_schedule.h"
#include "training/gradient_buckets.h"
#include "training/momentum_source.h"

namespace marian {

class GradientAllreducer {
public:
  // shards: the node's gradient shards as reduce() will get them (their sizes and devices);
  // buckets: disjoint sets of ranges that cover the n values of the shards (empty: one bucket);
  // layout: the parameters' shapes (PowerSGD's matrices; not needed otherwise).
  GradientAllreducer(const Options& options, Transport& transport, const std::vector<Tensor>& shards,
                     uint64_t seed, const std::vector<GradientBucket>& buckets = {},
                     const Parameters* layout = nullptr, const MomentumSource& momentum = MomentumSource());
  // The node's gradient, held as consecutive shards (n values in all) on the node's devices,
  // becomes the sum over ranks of what each rank sent; identical on every rank. With compression
  // each piece (a bucket's part of a shard) keeps its own residual and selects its own top
  // entries (density x its size) where it lives, so from a GPU only the selection crosses to the
  // host; the sum is scattered back into the shards. reduce() does every bucket in order.
  void reduce(const std::vector<Tensor>& shards);
  // The same for bucket b's values only; collective: every rank reduces the same bucket.
  void reduceBucket(size_t b, const std::vector<Tensor>& shards);
  // The update (0-based) the next reductions belong to: the density's warm-up follows it.
  void setStep(uint64_t update) { step_ = update; }
  // Whether this step's result is the gradient that gives 1-bit Adam's averaged momentum, each
  // rank's own gradient clipped before (--clip-norm): not a gradient to clip again.
  bool clippedBeforeTheSum() const { return !oneBit_.empty() && step_ >= oneBitStart_; }
  // Whether the sum is approximate (top-k or PowerSGD), with residuals.
  bool compresses() const { return density_ < 1.0 || !powerSgd_.empty() || !oneBit_.empty(); }
  const Compression& compression() const { return compression_; }
  size_t buckets() const { return buckets_.size(); }
  const GradientBucket& bucket(size_t b) const { return buckets_[b]; }
  // bytes on the wire since the last take, every bucket's, as the transport counted them (not
  // for dense)
  AllreduceBytes takeBytes() { return algorithms_[0]->takeBytes(); }

  // Collective: every rank's residuals (and selector counts) go to rank 0's `state`, as
  // extras "allreduce-residual.rankR" (n values in the global layout) and counters.
  void saveTo(ModelState& state);
  // Takes this rank's residuals back; from a checkpoint of another rank or device count, the
  // residuals of all saved ranks are summed into rank 0's (what every rank would have sent is
  // sent once: the sum over ranks is what the allreduce applies), and the log says so.
  void restoreFrom(const ModelState& state);

private:
  // A bucket's part of a shard (one of each range of the bucket): where it is in the flat
  // layout, in its shard, and in the bucket's values.
  struct Piece {
    size_t shard, bucket;
    Range global;
    size_t inShard, inBucket;
  };
  size_t keptOf(size_t n) const { return compression_.keptOf(n, step_); }
  // Before piece i selects: local clipping, and what local gradients need afterwards.
  void prepareLocal(size_t i, Tensor piece);
  // After the sum is in piece i: this rank's own unsent part added (local gradients).
  void addLocal(size_t i, Tensor piece);
  Tensor pieceOf(const Piece& p, const std::vector<Tensor>& shards) const;

  Transport& transport_;
  std::vector<GradientBucket> buckets_;
  std::vector<size_t> bucketSizes_;
  std::vector<std::unique_ptr<Allreduce>> algorithms_;  // one per bucket (their state is theirs)
  std::vector<Piece> pieces_;                            // by bucket, then shard
  std::vector<std::vector<size_t>> bucketPieces_;        // the pieces of each bucket
  size_t n_;
  double density_;
  Compression compression_;
  uint64_t step_ = 0;
  std::vector<std::unique_ptr<FlatBuffer>> localScratch_;  // per piece: its residual or gradient before selection
  TopkMethod method_;
  int reuseEvery_;
  uint64_t seed_;
  std::vector<std::unique_ptr<TopkSelector>> selectors_;  // one per piece, when density < 1
  std::vector<std::vector<float>> dense_;                 // per bucket: the host copy for dense
  std::vector<std::unique_ptr<PowerSgd>> powerSgd_;       // per bucket, with --powersgd-rank
  uint64_t powerSgdStart_ = 0;
  // PowerSGD's state in the global layout: the residual of every bucket, and their Qs joined
  void restorePowerSgd(const ModelState& state);
  // Every gathered rank's "residual" as "allreduce-residual.rankR" (rank 0).
  void saveRankResiduals(const std::vector<ModelState>& all, ModelState& state) const;
  // This rank's residual from a checkpoint: its own on the same rank count, otherwise on rank 0
  // the saved ranks' sum times otherLayoutScale (logged, naming `what`) and zeros elsewhere.
  std::vector<float> rankResidual(const ModelState& state, float otherLayoutScale, const char* what) const;
  std::vector<std::unique_ptr<OneBitAllreduce>> oneBit_;  // per bucket, with --onebit-adam or --zero-one-adam
  uint64_t oneBitStart_ = 0;
  float oneBitClipNorm_ = 0.f;  // --clip-norm, applied to each rank's gradient before its momentum
  AdamVarianceSchedule zeroOneVariance_;  // 0/1 Adam's (kappa > 0): steps off it send the gradient in 1 bit
  MomentumSource momentum_;
  void averageMomentum(size_t b, std::vector<float>& bucket);
  bool oneBitUpdateDirection_ = false;
  std::vector<std::vector<size_t>> oneBitParameterStarts_;  // per bucket, in its coordinates
  // Bucket b's units for --onebit-update-direction: sqrt(v), at least a 100th of the parameter's
  // mean sqrt(v) (a value whose variance froze at 0 would otherwise set its parameter's scale).
  std::vector<float> updateDirectionUnits(size_t b) const;
  // Where each parameter of bucket b begins, in the bucket's coordinates (sorted).
  std::vector<size_t> parameterStarts(size_t b, const Parameters& layout) const;
  void saveOneBit(ModelState& state);
  void restoreOneBit(const ModelState& state);
  // A bucket's values (in its own coordinates) placed into, or taken from, the global layout.
  void placeBucket(size_t b, const std::vector<float>& inBucket, std::vector<float>& global) const;
  std::vector<float> takeBucket(size_t b, const std::vector<float>& global) const;
};

// Whether the momentum goes in 1 bit (--onebit-adam or --zero-one-adam).
bool sendsOneBit(const Options& options);

// Checks the options of synchronous SGD across ranks (also on one rank, so typos never pass).
void validateAllreduceOptions(const Options& options);

}  // namespace marian
