// Asynchronous SGD over the devices of a node (CPU cores or GPUs) (seed 004 §3.5): the parameters
// are split into one shard per device, apart from the devices' own copies (ApartShards), each shard with its own lock, optimizer and moving average. Every device runs on its
// own thread, a schedule of three steps per batch:
//   1. pull: its parameters become every shard's current values;
//   2. compute the gradients of its batch;
//   3. push: its gradients (checked and clipped alone) go to every shard, which applies them at once.
// Devices never wait for each other, so gradients can be stale by the updates other devices
// pushed in between.
#include "training/graph_groups/device_threads.h"
#include "training/graph_groups/device_worker.h"
#include "training/graph_groups/dropout_seeds.h"
#include "training/exchange/outer_rounds.h"
#include "training/graph_groups/graph_group.h"
#include "training/graph_groups/apart_shards.h"

namespace marian {

namespace {

class AsyncGraphGroup : public GraphGroup {
public:
  AsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                  const std::vector<Device>& devices)
      : options_(o), normalizeGradient_(o.get<bool>("normalize-gradient")), clipNorm_(o.get<float>("clip-norm")),
        seed_(seed), threads_(devices.size()) {
    for(const Device& device : devices)
      workers_.push_back(std::make_unique<DeviceWorker>(device, o, srcVocab, trgVocab, seed));
  }

  ~AsyncGraphGroup() override { threads_.stop(); }

  void initialize(const Batch& sample) override {
    std::vector<Parameters*> params;
    for(auto& w : workers_) {
      w->initialize(sample);
      params.push_back(&w->params());
    }
    shards_ = std::make_unique<ApartShards>(params, [this] { return createOptimizer(options_); },
                                            options_.get<float>("exponential-smoothing"));
    threads_.start([this](size_t d, const BatchWork& work) { return step(d, work); });
  }

  StepStats update(const Batch& batch, uint64_t update, float lr, uint64_t) override {
    return threads_.update(batch, update, lr);
  }

  void finish() override {
    threads_.waitIdle();
    shards_->synchronize();
  }

  const Parameters& layout() override { return workers_[0]->params(); }

  std::vector<float> values(bool smoothed) override {
    finish();
    return shards_->values(smoothed);
  }

  ModelState saveState() override {
    finish();
    ModelState state;
    state.n = layout().totalSize();
    state.devices = workers_.size();
    shards_->saveTo(state);
    return state;
  }

  void restore(const ModelState& state) override {
    OuterRounds::refuseFragmentsInFlight(state);
    finish();
    shards_->restoreFrom(state);
  }

private:
  StepStats step(size_t d, const BatchWork& work) {
    shards_->pull(d);
    double ce = workers_[d]->computeGradients(work.batch.split(), gradientScale(normalizeGradient_, work.batch.trgWords),
                                              batchRandomSeed(seed_, work.update, d));
    shards_->push(d, work.lr, clipNorm_, work.update);
    return StepStats::of(work.batch, ce);
  }

  Options options_;
  bool normalizeGradient_;
  float clipNorm_;
  uint64_t seed_;
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  std::unique_ptr<ApartShards> shards_;  // after the workers: its updates read their gradients
  DeviceThreads threads_;  // stopped first: their steps use the workers and shards
};

}  // namespace

std::unique_ptr<GraphGroup> createAsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                  uint64_t seed, const std::vector<Device>& devices) {
  return std::make_unique<AsyncGraphGroup>(o, srcVocab, trgVocab, seed, devices);
}

}  // namespace marian
