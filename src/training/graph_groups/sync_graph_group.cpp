// Synchronous SGD over the devices of a node (CPU cores or GPUs) (and, with one device, the singleton):
//   1. each device computes the gradients of its slice of the batch;
//   2. reduce-scatter: device k sums every device's gradients of shard k (its slice of the flat
//      buffer) into its own;
//   3. the gradient norm is combined from the shards and clipped (--clip-norm);
//   4. device k runs its optimizer (and the moving average) on shard k;
//   5. all-gather: every device copies every other device's updated shard.
// With one device, steps 2 and 5 do nothing and this is plain single-device training.
// Under mpirun (without --multi-node), between steps 2 and 3 every rank's summed gradient goes
// through a GradientAllreducer (dense, or top-k with residuals and a sparse allreduce), so all
// ranks apply the same update to the same parameters: synchronous SGD across nodes. With
// --bucket-size (default), steps 2 and the allreduce run per bucket of the gradient on a
// communication thread as soon as backward has finished the bucket on every device
// (OverlappedAllreduce), so communication hides behind the rest of backward. With dense sums,
// embedding lookups of a parameter that other nodes read too (a tied output layer, whose backward
// comes first) add their rows apart (ExpressionGraph::LookupsApart): the parameter's bucket goes
// during backward, and only the rows the batch looked up are summed after it, as sparse pairs.
#include <algorithm>
#include <chrono>
#include <optional>

#include "common/logging.h"
#include "common/parallel.h"
#include "common/timeline.h"
#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"
#include "training/graph_groups/cost_scaling.h"
#include "training/graph_groups/device_worker.h"
#include "training/graph_groups/dropout_seeds.h"
#include "training/exchange/codec_checkpoint.h"
#include "training/exchange/gradient_allreducer.h"
#include "training/exchange/outer_rounds.h"
#include "training/graph_groups/graph_group.h"
#include "training/graph_groups/local_replicas.h"
#include "training/graph_groups/lookup_rows_apart.h"
#include "training/graph_groups/in_place_shards.h"
#include "training/graph_groups/overlapped_allreduce.h"

namespace marian {

namespace {

double seconds(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

class SyncGraphGroup : public GraphGroup {
public:
  SyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                 const std::vector<Device>& devices, Transport* ranks)
      : options_(o), normalizeGradient_(o.get<bool>("normalize-gradient")), clipNorm_(o.get<float>("clip-norm")),
        emaAlpha_(o.get<float>("exponential-smoothing")), seed_(seed),
        transport_(ranks && ranks->size() > 1 ? ranks : nullptr), costScaling_(CostScaling::fromOptions(o)) {
    if(costScaling_) {
      ABORT_IF(transport_ && (o.get<float>("compression-density") < 1.f || o.get<int>("powersgd-rank") > 0 ||
                              sendsOneBit(o) || o.get<int>("local-steps") > 0),
               "--cost-scaling (--fp16) needs the dense exchange across ranks: every rank must see the same summed "
               "gradient to agree on skipping an update (no --compression-density, --powersgd-rank, --onebit-adam, "
               "--zero-one-adam or --local-steps)");
      LOG(info, "[training] {}", costScaling_->describe());
    }
    for(const Device& device : devices)
      workers_.push_back(std::make_unique<DeviceWorker>(device, o, srcVocab, trgVocab, seed));
  }

  void initialize(const Batch& sample) override {
    parallelFor(workers_.size(), [&](size_t d) { workers_[d]->initialize(sample); });
    std::vector<Parameters*> params;
    for(auto& w : workers_)
      params.push_back(&w->params());
    size_t ranks = transport_ ? size_t(transport_->size()) : 1;  // (local steps average the ranks' updates)
    shards_ = std::make_unique<InPlaceShards>(params, [this, ranks] { return createOptimizer(options_, ranks); },
                                              emaAlpha_);
    sharesRoundedParameters_ = std::all_of(workers_.begin(), workers_.end(), [](const auto& w) {
      return w->device().type == DeviceType::cpu && w->graph().productType() == ProductType::bfloat16;
    });
    bool localSteps = options_.get<int>("local-steps") > 0;  // (its options checked by createGraphGroup)
    if(!transport_ && localSteps)
      LOG(warn, "[training] --local-steps has no effect on one rank: it trains as without");
    if(transport_ && localSteps) {  // no gradient exchange: each rank steps alone
      replicas_ = std::make_unique<LocalReplicas>(*transport_, /*averageMoments=*/false);
      std::vector<size_t> parameterStarts;
      for(const Parameters::Entry& e : layout().entries())
        parameterStarts.push_back(e.offset);
      std::sort(parameterStarts.begin(), parameterStarts.end());  // (laid out by name, not in entry order)
      rounds_ = std::make_unique<OuterRounds>(options_, *transport_, shards_->values(false), parameterStarts);
    } else if(transport_) {
      for(size_t k = 0; k < shards_->size(); ++k)
        gradShards_.push_back(shards_->shard(k, k, true));
      float megabytes = options_.get<float>("bucket-size");
      ABORT_IF(!(megabytes >= 0.f), "--bucket-size must be >= 0 MB, not {}", megabytes);
      size_t floats = size_t(double(megabytes) * 1048576.0 / sizeof(float));
      // Dense sums with buckets put the embedding lookups of tied tables apart (their rows are
      // summed after backward) when there is such a table (the order changes) and more than one
      // bucket for it to go early in.
      DeviceWorker& first = *workers_[0];
      bool lookupsApart =
          floats > 0 && options_.get<float>("compression-density") >= 1.f && options_.get<int>("powersgd-rank") == 0 &&
          !sendsOneBit(options_) && !first.lookupTables().empty();
      std::vector<GradientBucket> buckets = gradientBuckets(first.params(), floats, first.gradientOrder(lookupsApart));
      if(lookupsApart && buckets.size() > 1)
        lookupTables_ = first.lookupTables();
      checkSameBucketsAsRankZero(*transport_, layout(), buckets, lookupTables_);
      allreducer_ = std::make_unique<GradientAllreducer>(options_, *transport_, gradShards_, seed_, buckets, &layout(),
                                                         shards_->adamMoments(adamBeta1(options_)));
      const Compression& c = allreducer_->compression();
      if(c.compresses() && c.local != LocalGradients::off)
        replicas_ = std::make_unique<LocalReplicas>(*transport_, c.averageMoments);
      if(c.local != LocalGradients::off && !c.compresses() && transport_->rank() == 0)
        LOG(warn, "[training] --local-gradients has no effect without compression (--compression-density 1): "
                  "every rank applies the same dense sum");
      if(floats > 0) {
        std::vector<Device> devices;
        for(auto& w : workers_)
          devices.push_back(w->device());
        std::function<void()> afterBackward;
        if(!lookupTables_.empty()) {  // with compression the top-k selects from the whole table
          lookupRows_ = std::make_unique<LookupRowsApart>(layout(), lookupTables_, workers_.size(), *transport_);
          afterBackward = [this] { lookupRows_->reduceInto(gradShards_, shards_->ranges(), active_); };
        }
        overlap_ = std::make_unique<OverlappedAllreduce>(workers_[0]->params(), buckets, devices, *transport_,
                                                         [this](size_t b) { reduceBucket(b); }, afterBackward);
      }
    }
  }

  int rank() const override { return transport_ ? transport_->rank() : 0; }
  int ranks() const override { return transport_ ? transport_->size() : 1; }
  bool ranksInLockstep() const override { return transport_ != nullptr; }
  // Not where something else reads or keeps Adam's moments or its step count: 1-bit and 0/1 Adam
  // (their codecs), a variance schedule (which counts the run's steps), local steps' rounds and the
  // ranks' local replicas (a copy of each rank's own state).
  bool resetsOptimizer() const override {
    return !sendsOneBit(options_) && !AdamVarianceSchedule::fromOptions(options_).skipsSteps() && !rounds_ &&
           !replicas_;
  }
  void resetOptimizerStatistics() override { shards_->resetOptimizers(); }
  // local steps: the ranks exchange nothing between their rounds' exchanges, so the trainer
  // agrees on what they trained once a round
  uint64_t updatesPerAgreement() const override { return rounds_ ? rounds_->schedule().steps() : 1; }

  void idleUpdate(uint64_t update) override {
    ABORT_IF(!rounds_, "Update {}: an idle update without --local-steps", update + 1);
    auto begin = std::chrono::steady_clock::now();
    exchangeRoundsAfter(update);
    averaged_.clear();
    averagedSmoothed_.clear();
    transport_->noteStep(0.0, seconds(begin, std::chrono::steady_clock::now()));  // its wait for the exchange
  }

  std::string statusLine() override {
    if(!allreducer_ && !rounds_)
      return "";
    // local steps: the outer steps' over every update (their channel's); otherwise what the
    // updates exchanged (the gradient's buckets, the lookups' rows summed apart, local gradients'
    // averages), not the checkpoints' gathers and validation's means between them
    ChannelBytes b = exchangedSinceStatus_;
    exchangedSinceStatus_ = ChannelBytes();
    if(rounds_) {
      AllreduceBytes outer = rounds_->takeBytes();
      b = {outer.sent, outer.received};
    }
    uint64_t notCounted = allreducer_ && !rounds_ ? allreducer_->takeUpdatesNotCounted() : 0;
    uint64_t updates = updatesSinceStatus_;
    updatesSinceStatus_ = 0;
    // the share of the allreduce's time that backward hid: the thread's busy time the update
    // did not wait for
    std::string hidden;
    if(overlap_ && busySinceStatus_ > 0)
      hidden = " : Hidden " + formatNumber("%.1f", 100.0 * std::max(0.0, 1.0 - waitSinceStatus_ / busySinceStatus_)) + "%";
    busySinceStatus_ = waitSinceStatus_ = 0;
    // MPI_Allreduce's own messages never pass our transport
    if(updates > 0 && notCounted == updates)
      return " : Sent not counted (MPI_Allreduce) : Recv not counted" + hidden;
    std::string partly;
    if(notCounted > 0)
      partly = format(" (MPI_Allreduce's not counted in {} of {} updates)", notCounted, updates);
    return trafficPerUpdate(double(b.sent), double(b.received), updates) + partly + hidden;
  }

  StepStats update(const Batch& batch, uint64_t update, float lr, uint64_t jobLabels) override {
    size_t n = workers_.size();
    ChannelBytes before = transport_ ? transport_->bytes(Channel::collective) : ChannelBytes();
    // local steps: each rank steps on its own gradient
    uint64_t updateLabels = rounds_ || jobLabels == 0 ? batch.trgWords : jobLabels;
    float scale = gradientScale(normalizeGradient_, updateLabels);
    float costFactor = costScaling_ ? costScaling_->factor() : 1.f;
    scale *= costFactor;
    std::vector<double> ce(n, 0.0);
    // which devices compute (a batch smaller than the devices leaves some without sentences)
    std::vector<std::vector<Batch>> shares(n);
    active_.assign(n, 0);
    for(size_t d = 0; d < n; ++d) {
      shares[d] = deviceShare(batch, d, n);
      active_[d] = !shares[d].empty();
    }
    if(allreducer_)
      allreducer_->setStep(update);
    if(sharesRoundedParameters_ && !rounded_)
      shareRoundedParameters();
    if(rounded_)  // the parameters as this update's products read them: each device rounds its shard
      parallelFor(n, [&](size_t k) {
        timeline::Span span("round weights", "compute");
        Range r = shards_->ranges()[k];
        if(r.size > 0)
          kernels::convert(rounded_->view(r.offset, Shape({int(r.size)})), shards_->shards()[k]->values());
      });
    // A device without sentences gives zeros, final before the communication thread may start a
    // bucket (once the active devices finished it) and add their gradients into this one's shard.
    if(std::count(active_.begin(), active_.end(), 0) > 0)
      parallelFor(n, [&](size_t d) {
        if(!active_[d]) {
          workers_[d]->params().zeroGrads();
          backendFor(workers_[d]->device()).synchronize();
        }
      });
    if(overlap_)
      overlap_->start(active_);
    auto begin = std::chrono::steady_clock::now();
    try {
      parallelFor(n, [&](size_t d) {
        if(!active_[d])
          return;
        ExpressionGraph::GradientReady ready;
        ExpressionGraph::LookupsApart apart;
        if(overlap_)
          ready = [this, d](size_t param) { overlap_->gradientReady(d, param); };
        if(lookupRows_)
          apart = [this, d](size_t param) { return lookupRows_->rowsOf(d, workers_[d]->device(), param); };
        uint64_t masks = batchRandomSeed(seed_, update, jobDevice(rank(), n, d));
        ce[d] = workers_[d]->computeGradients(shares[d], scale, masks, ready, apart);
        if(overlap_)
          overlap_->backwardDone(d);
      });
    } catch(...) {
      if(overlap_)
        overlap_->finish(/*failed=*/true);
      throw;
    }

    auto computed = std::chrono::steady_clock::now();
    if(overlap_) {  // the buckets' reduce-scatter and allreduce ran beside backward
      overlap_->finish();
      busySinceStatus_ += overlap_->lastBusySeconds();
      waitSinceStatus_ += overlap_->lastWaitSeconds();
      ++updatesSinceStatus_;
    } else {
      Range all{0, layout().totalSize()};
      parallelFor(n, [&](size_t k) {
        timeline::Span span("reduce-scatter", "sync");
        shards_->sumDevicesInto(k, all, active_);
      });
      if(allreducer_) {
        timeline::Span span("allreduce", "comm");
        for(size_t b = 0; b < allreducer_->buckets(); ++b)
          reduceAcrossRanks(b);
        ++updatesSinceStatus_;
      }
    }
    auto exchanged = std::chrono::steady_clock::now();
    if(!heldBack_.gradient.empty()) {
      if(costFactor != 1.f)  // in the scaled gradient's units
        for(float& x : heldBack_.gradient)
          x *= costFactor;
      shards_->addToGradients(heldBack_.gradient);
      heldBack_ = HeldBackOnOneRank();
    }
    // 1-bit Adam's ranks clipped their own gradients: the one here only gives their momentum
    bool stepped = shards_->step(lr, allreducer_ && allreducer_->clippedBeforeTheSum() ? 0.f : clipNorm_, update,
                                 1.f / costFactor, /*skipNotFinite=*/bool(costScaling_));
    if(costScaling_ && !costScaling_->afterGradient(stepped)) {
      LOG(warn, "[training] The gradient of update {} is not finite with cost scaling {}: update skipped, the factor is now {}",
          update + 1, costFactor, costScaling_->factor());
      ABORT_IF(costScaling_->skipsInARow() >= CostScaling::kSkipsMeaningDivergence,
               "The gradients of {} updates in a row (the last update {}) were not finite with cost scaling down to {}: "
               "training diverged; the last saved checkpoint is kept (try a lower --learn-rate or --clip-norm)",
               costScaling_->skipsInARow(), update + 1, costScaling_->factor());
    }
    if(stepped)
      shards_->allGather();
    auto steppedAt = std::chrono::steady_clock::now();
    if(rounds_)
      exchangeRoundsAfter(update);
    averaged_.clear();
    averagedSmoothed_.clear();
    uint64_t every = allreducer_ ? allreducer_->compression().averageFreq : 0;
    if(replicas_ && every > 0 && (update + 1) % every == 0) {
      replicas_->average(shards_->shards());
      shards_->allGather();
    }
    if(transport_) {
      // this update's exchanges on the collective channel (one thread of this rank there at a time)
      ChannelBytes after = transport_->bytes(Channel::collective);
      exchangedSinceStatus_.sent += after.sent - before.sent;
      exchangedSinceStatus_.received += after.received - before.received;
      // the wait: the exchange's (with buckets, what backward did not hide), or the outer step's
      transport_->noteStep(seconds(begin, computed),
                           seconds(computed, exchanged) + seconds(steppedAt, std::chrono::steady_clock::now()));
    }

    double cost = 0;
    for(double c : ce)
      cost += c;
    StepStats stats = StepStats::of(batch, cost);
    stats.skipped = !stepped;
    // Marian's gNorm: the norm per label (the sum's, or the normalized gradient's own)
    if(stepped)
      stats.gradientNorm =
          shards_->lastGradientNorm() / (normalizeGradient_ ? 1.0 : double(std::max<uint64_t>(updateLabels, 1)));
    return stats;
  }

  const Parameters& layout() override { return workers_[0]->params(); }

  void releaseWorkspaces() override {
    for(auto& w : workers_)
      w->graph().releaseWorkspace();
    if(rounded_) {  // rounded anew at every update: dead in between, and as large as half the parameters
      for(auto& w : workers_)
        w->graph().useRoundedParameters(Tensor());
      rounded_.reset();
    }
  }

  // Local gradients: rank 0 validates the mean of the ranks' copies; nothing changes them.
  void prepareValidation() override {
    if(!replicas_)
      return;
    for(bool smoothed : {false, true}) {
      if(smoothed && emaAlpha_ <= 0.f) {  // without a moving average the smoothed values are the values
        averagedSmoothed_ = averaged_;
        break;
      }
      (smoothed ? averagedSmoothed_ : averaged_) = replicas_->mean(shards_->values(smoothed));
    }
  }

  std::vector<float> values(bool smoothed) override {
    const std::vector<float>& mean = smoothed ? averagedSmoothed_ : averaged_;
    if(!mean.empty())  // prepareValidation's, until the next update
      return mean;
    return shards_->values(smoothed);  // this rank's copy
  }

  ModelState saveState() override {
    ModelState state;
    state.n = layout().totalSize();
    state.ranks = ranks();
    state.devices = workers_.size();
    shards_->saveTo(state);
    if(rounds_)
      rounds_->saveTo(state);
    if(allreducer_)  // collective: every rank's residuals go to rank 0
      allreducer_->saveTo(state);
    if(replicas_)  // collective: every rank's copy goes to rank 0
      replicas_->gather(state);
    if(costScaling_)
      costScaling_->saveTo(state);
    heldBack_.saveTo(state, adamBeta1(options_));  // resumed on one rank, saved before its first update: still owed
    if(rank() != 0)
      return {};
    return state;  // moved (a conditional expression would copy the model's arrays once more)
  }

  void restore(const ModelState& saved) override {
    if(!rounds_)
      OuterRounds::refuseFragmentsInFlight(saved);
    if(costScaling_)
      costScaling_->restoreFrom(saved);
    shards_->restoreFrom(saved);
    restoreOwnReplica(saved);
    if(rounds_) {
      rounds_->restoreFrom(saved);
      return;
    }
    // The ranks' gradients are summed, so what the saved ranks held back counts once wherever it goes.
    if(allreducer_) {
      allreducer_->restoreFrom(saved);
      return;
    }
    // One rank does not compress: what the saved ranks held back joins the first gradient.
    heldBack_ = HeldBackOnOneRank::from(saved, adamBeta1(options_));
    if(!heldBack_.gradient.empty())
      LOG(info, "[training] Checkpoint of {} rank(s) resumed on 1: the saved allreduce residuals are summed into "
                "rank 0's first gradient (one rank does not compress)",
          saved.ranks);
  }

private:
  // Local steps: the rounds' exchanges due after update `update`, whether this rank stepped or
  // idled (its parameters written where a fragment's outer step lands).
  void exchangeRoundsAfter(uint64_t update) {
    ++updatesSinceStatus_;
    if(rounds_->afterUpdate(update, parameterAccess()))
      shards_->allGather();
  }
  // bfloat16 products on CPU devices read one rounded copy of the parameters, the process's: the
  // devices' parameters are equal at the start of an update, so one copy (not one per device)
  // made then (not at every forward of --optimizer-delay's pieces) serves them all.
  void shareRoundedParameters() {
    rounded_ = std::make_unique<FlatBuffer>(workers_[0]->device(), Type::bfloat16, layout().totalSize());
    for(auto& w : workers_)
      w->graph().useRoundedParameters(rounded_->all());
  }

  // Bucket b of the node's summed gradient (device k holds shard k) through the allreducer,
  // which selects and scatters each piece where it lives.
  void reduceAcrossRanks(size_t b) { allreducer_->reduceBucket(b, gradShards_); }

  // Local steps read and write the parameters a range at a time, in the shards that hold it
  // (each device's own); allGather copies what was written to the other devices.
  OuterRounds::ParameterAccess parameterAccess() {
    auto parts = [this](Range r, const std::function<void(Tensor, size_t)>& f) {
      std::vector<Range> ranges = shards_->ranges();
      for(size_t k = 0; k < ranges.size(); ++k) {
        size_t from = std::max(r.offset, ranges[k].offset), to = std::min(r.end(), ranges[k].end());
        if(from < to)
          f(shards_->shards()[k]->values().slice(from - ranges[k].offset, to - from), from - r.offset);
      }
    };
    OuterRounds::ParameterAccess access;
    access.read = [parts](Range r) {
      std::vector<float> values(r.size);
      parts(r, [&](Tensor part, size_t at) {
        std::vector<float> host = kernels::toHost(part);
        std::copy(host.begin(), host.end(), values.begin() + long(at));
      });
      return values;
    };
    access.write = [parts](Range r, const std::vector<float>& values) {
      parts(r, [&](Tensor part, size_t at) {
        kernels::fromHost(part, std::vector<float>(values.begin() + long(at), values.begin() + long(at + part.size())));
      });
    };
    return access;
  }

  // Bucket b on the communication thread, as soon as backward has finished it on every device.
  void reduceBucket(size_t b) {
    for(size_t k = 0; k < shards_->size(); ++k)
      shards_->sumDevicesInto(k, allreducer_->bucket(b), active_);
    reduceAcrossRanks(b);
  }

  // A checkpoint of local gradients holds every rank's copy: this rank's own, on as many ranks
  // as saved it; otherwise every rank starts from the saved mean.
  void restoreOwnReplica(const ModelState& state) {
    std::optional<ModelState> own = replicas_ ? replicas_->ownCopy(state) : std::nullopt;
    if(!own)
      return;
    shards_->restoreFrom(*own);
  }

  Options options_;
  bool normalizeGradient_;
  float clipNorm_, emaAlpha_;
  uint64_t seed_;
  Transport* transport_;  // null on one rank
  std::optional<CostScaling> costScaling_;  // --cost-scaling, --fp16
  std::unique_ptr<GradientAllreducer> allreducer_;
  std::unique_ptr<LocalReplicas> replicas_;  // local gradients or local steps: the ranks' copies
  std::unique_ptr<OuterRounds> rounds_;      // local steps (--local-steps)
  std::vector<Tensor> gradShards_;  // gradient shard k on device k: what the allreducer reduces
  std::vector<char> active_;  // which devices compute in this update
  uint64_t updatesSinceStatus_ = 0;
  ChannelBytes exchangedSinceStatus_;  // what the updates since the last status line exchanged (collective channel)
  double busySinceStatus_ = 0, waitSinceStatus_ = 0;  // the communication thread's, in seconds
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  std::unique_ptr<InPlaceShards> shards_;
  // bfloat16 products on CPUs: the parameters' copy they read, made at an update, released with the workspaces
  bool sharesRoundedParameters_ = false;
  std::unique_ptr<FlatBuffer> rounded_;
  std::vector<float> averaged_, averagedSmoothed_;  // prepareValidation's means (local gradients)
  HeldBackOnOneRank heldBack_;  // a multi-rank checkpoint's residuals, for the first gradient
  std::vector<size_t> lookupTables_;  // dense sums with buckets: tables whose lookups go apart (or none)
  std::unique_ptr<LookupRowsApart> lookupRows_;
  std::unique_ptr<OverlappedAllreduce> overlap_;  // last: its thread stops before what it uses goes
};

}  // namespace

std::unique_ptr<GraphGroup> createSyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                                                 const std::vector<Device>& devices, Transport* ranks) {
  return std::make_unique<SyncGraphGroup>(o, srcVocab, trgVocab, seed, devices, ranks);
}

}  // namespace marian
