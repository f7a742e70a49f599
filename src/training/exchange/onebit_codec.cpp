// 1-bit Adam (--onebit-adam) and 0/1 Adam (--zero-one-adam): after --adam-freeze-variance-after
// dense updates the ranks average Adam's momentum in 1 bit a value, with a scale per parameter or
// per --onebit-block-size values (comm/allreduce/onebit.h) and error feedback on the worker and
// the serving side. The momentum's rule is the optimizer's (optimizers/adam_moments.h): each
// rank's candidate goes out, the average comes back as the gradient whose momentum step gives it.
// 0/1 Adam before the freeze sends the gradient itself in 1 bit on the steps where the variance
// does not change (optimizers/variance_schedule.h), densely on the others.
#include "comm/allreduce/onebit.h"
#include "comm/allreduce/segments.h"
#include "comm/state_gather.h"
#include "common/logging.h"
#include "common/options.h"
#include "optimizers/variance_schedule.h"
#include "training/exchange/codec_checkpoint.h"
#include "training/exchange/codecs.h"
#include "training/exchange/host_bucket_codec.h"

namespace marian {

namespace {

class OneBitCodec : public HostBucketCodec {
public:
  explicit OneBitCodec(const CodecSetting& s)
      : HostBucketCodec(s.layout), transport_(s.transport), moments_(s.moments),
        start_(uint64_t(s.options.get<int>("adam-freeze-variance-after"))), clipNorm_(s.options.get<float>("clip-norm")),
        updateDirection_(s.options.get<bool>("onebit-update-direction")) {
    ABORT_IF(!moments_.readable(), "1-bit Adam needs Adam's momentum");
    ABORT_IF(updateDirection_ && !moments_.varianceReadable(), "--onebit-update-direction needs Adam's variance");
    if(s.options.get<bool>("zero-one-adam"))
      zeroOneVariance_ = AdamVarianceSchedule::fromOptions(s.options);
    OneBitScale scale = oneBitScaleFromName(s.options.get<std::string>("onebit-scale"));
    size_t block = size_t(s.options.get<int>("onebit-block-size"));
    for(size_t b = 0; b < layout_.buckets(); ++b) {
      std::vector<size_t> starts = s.parameters ? layout_.parameterStarts(b, *s.parameters) : std::vector<size_t>{0};
      parameterStarts_.push_back(starts);
      oneBit_.push_back(std::make_unique<OneBitAllreduce>(
          transport_, layout_.bucketSize(b), segmentStarts(starts, layout_.bucketSize(b), block)));
      oneBit_.back()->setScale(scale);
    }
    errorUnits_.assign(layout_.buckets(), Units::none);
  }

  bool clippedBeforeTheSum(uint64_t step) const override { return step >= start_; }

  // Each rank's worker errors (as its residual, global layout) and the servers' errors, which
  // cover the buckets' chunks once between them (one global array): the momentum's, or 0/1 Adam's
  // of its 1-bit gradients (before the freeze), which are gradient residuals owed to the sum, so
  // that a resume on one rank or in another scheme reads them as such.
  void saveTo(ModelState& state) override {
    size_t n = layout_.size();
    bool gradients = std::count(errorUnits_.begin(), errorUnits_.end(), Units::gradient) > 0;
    ModelState mine;
    mine.n = n;
    std::vector<float>& worker = mine.extras["residual"];
    std::vector<float>& server = mine.extras["server"];
    worker.assign(n, 0.f);
    server.assign(n, 0.f);
    for(size_t b = 0; b < layout_.buckets(); ++b) {
      const OneBitAllreduce& o = *oneBit_[b];
      layout_.placeBucket(b, o.workerError(), worker);
      std::vector<float> inBucket(layout_.bucketSize(b), 0.f);
      Range c = o.chunk(transport_.rank());
      std::copy(o.serverError().begin(), o.serverError().end(), inBucket.begin() + long(c.offset));
      layout_.placeBucket(b, inBucket, server);
    }
    std::vector<ModelState> all = gatherStates(transport_, mine, "the 1-bit Adam errors");
    if(transport_.rank() != 0)
      return;
    saveRankResiduals(all, state);
    state.counters["allreduce-buckets"] = layout_.buckets();
    std::vector<float>& servers = state.extras[gradients ? kZeroOneServerErrors : kOneBitServerErrors];
    servers.assign(n, 0.f);
    for(size_t r = 0; r < all.size(); ++r) {
      const std::vector<float>& theirs = all[r].extras.at("server");
      for(size_t i = 0; i < n; ++i)
        servers[i] += theirs[i];  // the chunks are disjoint
    }
  }

  void restoreFrom(const ModelState& state) override {
    size_t n = layout_.size();
    float rankRatio = float(transport_.size()) / float(state.ranks);  // R' / R
    auto momentumServers = state.extras.find(kOneBitServerErrors), gradientServers = state.extras.find(kZeroOneServerErrors);
    std::vector<float> worker(n, 0.f), servers(n, 0.f);
    Units units = Units::none;
    if(momentumServers != state.extras.end()) {
      // errors of the mean's terms: on R' ranks rank 0 carries the saved R ranks' R'/R-fold
      worker = rankResidual(state, transport_, n, rankRatio, "1-bit Adam worker errors");
      servers = momentumServers->second;
      units = Units::momentum;
    } else if(hasRankResiduals(state) &&
              (zeroOneVariance_.kappa > 0 || residualsInUnitsOf(state, /*momentum=*/true, transport_, "1-bit Adam's errors"))) {
      // gradient residuals (0/1 Adam's 1-bit gradients, or another scheme's): owed once to the sum;
      // the servers' R-fold (the sum is R times the mean they correct), on R' ranks R / R' times theirs
      worker = rankResidual(state, transport_, n, 1.f, "0/1 Adam's errors of its 1-bit gradients");
      if(gradientServers != state.extras.end()) {
        servers = gradientServers->second;
        for(float& x : servers)
          x /= rankRatio;
      }
      units = Units::gradient;
    }
    errorUnits_.assign(layout_.buckets(), units);
    restoredUnread_ = units != Units::none;
    for(size_t b = 0; b < layout_.buckets(); ++b) {
      Range c = oneBit_[b]->chunk(transport_.rank());
      std::vector<float> inBucket = layout_.takeBucket(b, servers);
      oneBit_[b]->setErrors(layout_.takeBucket(b, worker),
                            std::vector<float>(inBucket.begin() + long(c.offset), inBucket.begin() + long(c.end())));
    }
  }

protected:
  void reduceOnHost(size_t b, std::vector<float>& values, Allreduce& sum, uint64_t step) override {
    if(step >= start_) {
      averageMomentum(b, values, step);
    } else if(zeroOneVariance_.kappa > 0 && !zeroOneVariance_.updatesAt(step + 1)) {
      // 0/1 Adam between the variance's steps: the sum as P x the 1-bit mean
      useErrorsIn(b, Units::gradient, step);
      oneBit_[b]->averageCompressed(values);
      for(float& x : values)
        x *= float(transport_.size());
    } else {
      sum.sumDense(values);
    }
  }

private:
  // What bucket b's errors hold: 0/1 Adam's of its 1-bit gradients, or the momentum's.
  enum class Units { none, gradient, momentum };

  static const char* errorsOf(Units units) {
    return units == Units::gradient ? "the gradients" : "the momentum";
  }

  // Bucket b's errors from here on in `units`: those in other units start at zero (at 0/1 Adam's
  // freeze, or a checkpoint's of a run whose variance froze at another update: the log says so).
  void useErrorsIn(size_t b, Units units, uint64_t step) {
    OneBitAllreduce& oneBit = *oneBit_[b];
    if(errorUnits_[b] != units && errorUnits_[b] != Units::none) {
      if(restoredUnread_ && transport_.rank() == 0)
        LOG(warn, "[training] The checkpoint's residuals are errors of {}, update {} sends {} in 1 bit "
                  "(another --adam-freeze-variance-after?): they start at zero",
            errorsOf(errorUnits_[b]), step + 1, errorsOf(units));
      oneBit.setErrors(std::vector<float>(oneBit.workerError().size(), 0.f),
                       std::vector<float>(oneBit.serverError().size(), 0.f));
    }
    errorUnits_[b] = units;
    restoredUnread_ = false;
  }

  void averageMomentum(size_t b, std::vector<float>& values, uint64_t step) {
    OneBitAllreduce& oneBit = *oneBit_[b];
    useErrorsIn(b, Units::momentum, step);  // errors of 0/1 Adam's 1-bit gradients are not the momentum's
    if(updateDirection_ && !oneBit.hasUnits())  // v is frozen from here on (also after a resume)
      oneBit.setUnits(moments_.updateDirectionUnits(layout_.bucket(b), parameterStarts_[b]));
    std::vector<float>& m = momentum_;
    moments_.toCandidate(layout_.bucket(b), values, transport_.size(), layout_.size(), clipNorm_, step, m);
    oneBit.averageCompressed(values);
    moments_.toGradient(values, m);
  }

  Transport& transport_;
  AdamMoments moments_;
  uint64_t start_;
  float clipNorm_;  // --clip-norm, applied to each rank's gradient before its momentum
  bool updateDirection_;
  AdamVarianceSchedule zeroOneVariance_;  // 0/1 Adam's (kappa > 0): steps off it send the gradient in 1 bit
  std::vector<std::unique_ptr<OneBitAllreduce>> oneBit_;  // per bucket
  std::vector<std::vector<size_t>> parameterStarts_;      // per bucket, in its coordinates
  std::vector<Units> errorUnits_;                         // per bucket
  bool restoredUnread_ = false;  // a checkpoint's errors restored, no bucket exchanged in 1 bit since
  std::vector<float> momentum_;                           // the bucket's m being averaged (kept between calls)
};

}  // namespace

std::unique_ptr<BucketCodec> createOneBitCodec(const CodecSetting& setting) {
  return std::make_unique<OneBitCodec>(setting);
}

}  // namespace marian
