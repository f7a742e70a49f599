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
// ranks apply the same update to the same parameters: synchronous SGD across nodes.
#include <cblas.h>

#include <cmath>

#include "common/logging.h"
#include "common/timeline.h"
#include "tensors/kernels.h"
#include "training/device_worker.h"
#include "tensors/devices_from_options.h"
#include "training/gradient_allreducer.h"
#include "training/graph_group.h"
#include "common/parallel.h"

namespace marian {

namespace {

class SyncGraphGroup : public GraphGroup {
public:
  SyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                 const std::vector<Device>& devices, MpiTransport* ranks)
      : options_(o), costType_(o.get<std::string>("cost-type")), clipNorm_(o.get<float>("clip-norm")),
        emaAlpha_(o.get<float>("exponential-smoothing")), seed_(seed),
        transport_(ranks && ranks->size() > 1 ? ranks : nullptr) {
    ABORT_IF(costType_ != "ce-sum" && costType_ != "ce-mean" && costType_ != "ce-mean-words",
             "--cost-type must be ce-sum, ce-mean or ce-mean-words, not '{}'", costType_);
    for(const Device& device : devices) {
      workers_.push_back(std::make_unique<DeviceWorker>(device, o, srcVocab, trgVocab, seed));
      optimizers_.push_back(createOptimizer(o.get<std::string>("optimizer"),
                                            o.get<std::vector<float>>("optimizer-params")));
    }
  }

  void initialize(const Batch& sample) override {
    parallelFor(workers_.size(), [&](size_t d) { workers_[d]->initialize(sample); });
    size_t n = workers_[0]->params().totalSize();
    for(size_t k = 0; k < workers_.size(); ++k) {
      shards_.push_back({n * k / workers_.size(), n * (k + 1) / workers_.size() - n * k / workers_.size()});
      if(emaAlpha_ > 0.f) {
        ema_.push_back(std::make_unique<FlatBuffer>(workers_[k]->device(), Type::float32, shards_[k].size));
        kernels::copy(ema_[k]->all(), shard(k, k, false));
      }
    }
    if(transport_)
      allreducer_ = std::make_unique<GradientAllreducer>(options_, *transport_, n, seed_);
  }

  int rank() const override { return transport_ ? transport_->rank() : 0; }
  int ranks() const override { return transport_ ? transport_->size() : 1; }
  bool ranksInLockstep() const override { return transport_ != nullptr; }

  std::string statusLine() override {
    if(!allreducer_)
      return "";
    AllreduceBytes b = allreducer_->takeBytes();
    double perUpdate = updatesSinceStatus_ ? 1.0 / double(updatesSinceStatus_) : 0.0;
    updatesSinceStatus_ = 0;
    return format(" : Sent {}/up : Recv {}/up", humanBytes(double(b.sent) * perUpdate),
                  humanBytes(double(b.received) * perUpdate));
  }

  StepStats update(const Batch& batch, uint64_t update, float lr) override {
    size_t n = workers_.size();
    float scale = costScale(costType_, batch);
    std::vector<double> ce(n, 0.0);
    // one byte per device: the threads set their own entries at once (std::vector<bool> packs
    // them into shared words, and concurrent writes to one word lose updates)
    std::vector<char> active(n, 0);
    parallelFor(n, [&](size_t d) {
      auto [begin, end] = deviceSlice(batch.sentences, d, n);
      if(begin == end) {
        workers_[d]->params().zeroGrads();
        return;
      }
      Batch part = n == 1 ? batch : batch.slice(begin, end - begin);
      uint64_t randomSeed = (seed_ * 1000003ull + update) * 131ull + d;
      ce[d] = workers_[d]->computeGradients(part, scale, randomSeed);
      active[d] = 1;
    });

    parallelFor(n, [&](size_t k) {  // reduce-scatter
      timeline::Span span("reduce-scatter", "sync");
      Tensor mine = shard(k, k, true);
      for(size_t d = 0; d < n; ++d)
        if(d != k && active[d])
          kernels::add(mine, shard(d, k, true));
    });
    if(allreducer_) {
      timeline::Span span("allreduce", "comm");
      reduceAcrossRanks();
    }
    std::vector<double> squares(n);
    parallelFor(n, [&](size_t k) { squares[k] = kernels::squaredNorm(shard(k, k, true)); });
    double norm = 0;
    for(double s : squares)
      norm += s;
    norm = std::sqrt(norm);
    ABORT_IF(!std::isfinite(norm), "Gradient norm is {} at update {}: training diverged", norm, update + 1);
    float clip = clipNorm_ > 0.f && norm > clipNorm_ ? float(clipNorm_ / norm) : 1.f;

    parallelFor(n, [&](size_t k) {  // optimizer and moving average on the owned shard
      timeline::Span span("update", "update");
      Tensor grads = shard(k, k, true);
      if(clip != 1.f)
        kernels::scale(grads, clip);
      optimizers_[k]->update(shard(k, k, false), grads, lr);
      if(!ema_.empty())
        kernels::emaStep(ema_[k]->all(), shard(k, k, false), emaAlpha_);
    });
    if(n > 1)
      parallelFor(n, [&](size_t d) {  // all-gather
        timeline::Span span("all-gather", "sync");
        for(size_t k = 0; k < n; ++k)
          if(k != d)
            kernels::copy(shard(d, k, false), shard(k, k, false));
      });

    StepStats stats;
    for(double c : ce)
      stats.ceSum += c;
    stats.labels = batch.trgWords;
    stats.sentences = size_t(batch.sentences);
    return stats;
  }

  const Parameters& layout() override { return workers_[0]->params(); }

  std::vector<float> values(bool smoothed) override {
    if(!smoothed || ema_.empty())
      return kernels::toHost(workers_[0]->params().values());
    std::vector<float> all;
    for(auto& e : ema_) {
      std::vector<float> part = kernels::toHost(e->all());
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }

  void setValues(const std::vector<float>& raw, const std::vector<float>& smoothed) override {
    for(auto& w : workers_)
      kernels::fromHost(w->params().values(), raw);
    for(size_t k = 0; k < ema_.size(); ++k) {
      const std::vector<float>& src = smoothed.empty() ? raw : smoothed;
      kernels::fromHost(ema_[k]->all(), std::vector<float>(src.begin() + shards_[k].offset,
                                                           src.begin() + shards_[k].offset + shards_[k].size));
    }
  }

  // The shards' states concatenated in order: the full-model state, whatever the device count.
  OptimizerState optimizerState() override {
    OptimizerState all;
    for(auto& opt : optimizers_) {
      OptimizerState s = opt->state();
      all.steps = s.steps;
      for(auto& [name, values] : s.arrays)
        all.arrays[name].insert(all.arrays[name].end(), values.begin(), values.end());
    }
    return all;
  }

  void setOptimizerState(const OptimizerState& state) override {
    for(size_t k = 0; k < optimizers_.size(); ++k) {
      OptimizerState part;
      part.steps = state.steps;
      for(auto& [name, values] : state.arrays) {
        ABORT_IF(values.size() != layout().totalSize(),
                 "Optimizer state '{}' holds {} values but the model has {}", name, values.size(),
                 layout().totalSize());
        part.arrays[name].assign(values.begin() + shards_[k].offset,
                                 values.begin() + shards_[k].offset + shards_[k].size);
      }
      optimizers_[k]->setState(part, workers_[k]->device());
    }
  }

private:
  // The node's summed gradient (device k holds shard k) through the allreducer, which selects
  // and scatters each shard where it lives. Mean cost types average over ranks, as one rank
  // averages over its devices' sentences or words.
  void reduceAcrossRanks() {
    std::vector<Tensor> shards;
    for(size_t k = 0; k < shards_.size(); ++k)
      shards.push_back(shard(k, k, true));
    allreducer_->reduce(shards);
    if(costType_ != "ce-sum")
      for(Tensor& t : shards)
        kernels::scale(t, 1.f / float(transport_->size()));
    ++updatesSinceStatus_;
  }

  struct Range {
    size_t offset, size;
  };
  // Shard k of device d's parameters or gradients.
  Tensor shard(size_t d, size_t k, bool grads) {
    Tensor all = grads ? workers_[d]->params().grads() : workers_[d]->params().values();
    return all.slice(shards_[k].offset, shards_[k].size);
  }

  Options options_;
  std::string costType_;
  float clipNorm_, emaAlpha_;
  uint64_t seed_;
  MpiTransport* transport_;  // null on one rank
  std::unique_ptr<GradientAllreducer> allreducer_;
  uint64_t updatesSinceStatus_ = 0;
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  std::vector<std::unique_ptr<Optimizer>> optimizers_;
  std::vector<std::unique_ptr<FlatBuffer>> ema_;
  std::vector<Range> shards_;
};

}  // namespace

float costScale(const std::string& costType, const Batch& batch) {
  if(costType == "ce-mean")
    return 1.f / float(batch.sentences);
  if(costType == "ce-mean-words")
    return 1.f / float(batch.trgWords);
  return 1.f;
}

std::unique_ptr<GraphGroup> createAsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                  uint64_t seed, const std::vector<Device>& devices);

std::unique_ptr<GraphGroup> createMultiNodeGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                      uint64_t seed);

std::unique_ptr<GraphGroup> createGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                             uint64_t seed) {
  if(o.get<bool>("multi-node"))
    return createMultiNodeGraphGroup(o, srcVocab, trgVocab, seed);
  validateAllreduceOptions(o);
  MpiTransport* mpi = MpiTransport::instance();
  ABORT_IF(mpi && mpi->size() > 1 && !o.get<bool>("sync-sgd"),
           "Started on {} MPI ranks: train with --sync-sgd (allreduce across ranks) or --multi-node (parameter server)",
           mpi->size());
  std::vector<Device> devices = devicesFromOptions(o);
  // Each CPU device is one core: BLAS must not spawn threads of its own under several devices.
  if(devices.size() > 1 && !onGpus(devices))
    openblas_set_num_threads(1);
  if(devices.size() == 1 || o.get<bool>("sync-sgd"))
    return std::make_unique<SyncGraphGroup>(o, srcVocab, trgVocab, seed, devices, mpi);
  return createAsyncGraphGroup(o, srcVocab, trgVocab, seed, devices);
}

}  // namespace marian
