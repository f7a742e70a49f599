// Asynchronous SGD over the devices of a node (CPU cores or GPUs) (seed 004 §3.5): the parameters live in one
// flat buffer split into one shard per device, each shard with its own lock, optimizer and
// moving average. Every device runs on its own thread: it takes the next batch, pulls the
// current parameters from every shard, computes its gradients and pushes them to every shard,
// which applies them at once. Devices never wait for each other, so gradients can be stale by
// the updates other devices pushed in between.
// On GPUs shard k lives on GPU k and its updates run on GPU k's second stream (lane 1), so they
// do not queue behind GPU k's own forward and backward; CUDA events order the hand-overs
// (a pull waits for the shard's last update, an update waits for the gradients it reads and for
// the pulls of the values it overwrites), and the host never waits for another GPU.
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/float_mode.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"
#include "training/batch_queue.h"
#include "training/device_worker.h"
#include "tensors/devices_from_options.h"
#include "training/dropout_seeds.h"
#include "training/graph_group.h"
#include "optimizers/gradient_clipping.h"
#include "optimizers/parameter_shard.h"

namespace marian {

namespace {

class AsyncGraphGroup : public GraphGroup {
public:
  AsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                  const std::vector<Device>& devices)
      : options_(o), costType_(o.get<std::string>("cost-type")), clipNorm_(o.get<float>("clip-norm")),
        emaAlpha_(o.get<float>("exponential-smoothing")), seed_(seed), queue_(devices.size()) {
    for(const Device& device : devices)
      workers_.push_back(std::make_unique<DeviceWorker>(device, o, srcVocab, trgVocab, seed));
  }

  ~AsyncGraphGroup() override {
    queue_.stop();
    for(std::thread& t : threads_)
      t.join();
    if(!workers_.empty() && onGpus())  // also after an error: no update may outlive its buffers
      for(auto& s : shards_)
        try {
          onShardLane([&] { backendFor(s->device).synchronize(); });
        } catch(...) {
        }
  }

  void initialize(const Batch& sample) override {
    for(auto& w : workers_)
      w->initialize(sample);
    size_t n = workers_[0]->params().totalSize(), devices = workers_.size();
    for(size_t k = 0; k < devices; ++k) {
      auto s = std::make_unique<Shard>();
      Range range = equalPart(n, k, devices);
      // on GPUs shard k lives on device k; CPU devices share the host memory anyway
      s->device = workers_[k]->device().type == DeviceType::gpu ? workers_[k]->device() : cpuDevice(0);
      s->params = std::make_unique<ParameterShard>(
          range, s->device, workers_[0]->params().values().slice(range.offset, range.size), /*inPlace=*/false,
          createOptimizer(options_),
          emaAlpha_);
      Backend& owner = backendFor(s->device);
      s->updated = owner.createEvent();
      for(size_t d = 0; d < devices; ++d)
        s->pulled.push_back(backendFor(workers_[d]->device()).createEvent());
      shards_.push_back(std::move(s));
    }
    for(size_t d = 0; d < devices; ++d) {
      gradsReady_.push_back(backendFor(workers_[d]->device()).createEvent());
      backendFor(workers_[d]->device()).synchronize();  // the shards' first values are in place
    }
    for(size_t d = 0; d < devices; ++d)
      threads_.emplace_back([this, d] { run(d); });
  }

  StepStats update(const Batch& batch, uint64_t update, float lr) override {
    queue_.push({batch, update, lr});
    return queue_.takeFinished();
  }

  void finish() override {
    queue_.waitIdle();
    if(onGpus())  // the shard updates still running on the GPUs' second streams
      for(auto& s : shards_)
        onShardLane([&] { backendFor(s->device).synchronize(); });
  }

  const Parameters& layout() override { return workers_[0]->params(); }

  std::vector<float> values(bool smoothed) override {
    finish();
    return joinShards(shards_, smoothed, [](const auto& s) -> const ParameterShard& { return *s->params; });
  }

  ModelState saveState() override {
    finish();
    ModelState state;
    state.n = layout().totalSize();
    state.devices = workers_.size();
    for(auto& s : shards_)
      s->params->saveTo(state);
    return state;
  }

  void restoreState(const ModelState& state) override {
    finish();
    ABORT_IF(state.n != layout().totalSize(), "The checkpoint holds {} parameters but the model has {}", state.n,
             layout().totalSize());
    for(auto& s : shards_)
      s->params->restoreFrom(state);
  }

private:
  struct Shard {
    Device device;
    std::mutex mutex;
    std::unique_ptr<ParameterShard> params;
    std::unique_ptr<FlatBuffer> staging;  // another GPU's gradients, copied here before the update
    std::unique_ptr<DeviceEvent> updated;              // GPU: after the last update (on the shard's GPU)
    std::vector<std::unique_ptr<DeviceEvent>> pulled;  // GPU: after device d's last pull (on GPU d)
  };

  bool onGpus() const { return workers_[0]->device().type == DeviceType::gpu; }

  // Runs f with this thread's GPU work on lane 1 (the shard updates' stream).
  template <class F>
  static void onShardLane(F&& f) {
    setDeviceLane(1);
    try {
      f();
    } catch(...) {
      setDeviceLane(0);
      throw;
    }
    setDeviceLane(0);
  }

  void run(size_t d) {
    flushDenormalsToZero();
    queue_.serve([&](const BatchWork& work) { return step(d, work); });
  }

  StepStats step(size_t d, const BatchWork& work) {
    DeviceWorker& w = *workers_[d];
    Tensor values = w.params().values(), grads = w.params().grads();
    bool gpu = onGpus();
    Backend& mine = backendFor(w.device());
    for(auto& s : shards_) {  // pull
      std::lock_guard<std::mutex> lock(s->mutex);
      Range r = s->params->range();
      if(!gpu) {
        kernels::copy(values.slice(r.offset, r.size), s->params->values());
        continue;
      }
      mine.wait(s->updated.get());
      kernels::copyUnordered(values.slice(r.offset, r.size), s->params->values());
      mine.record(s->pulled[d].get());
    }
    double ce = w.computeGradients(work.batch.split(), costScale(costType_, work.batch), batchRandomSeed(seed_, work.update, d));
    clipGradients(grads, clipNorm_, work.update);
    if(gpu)
      mine.record(gradsReady_[d].get());
    for(auto& s : shards_) {  // push: each shard applies the gradients at once
      std::lock_guard<std::mutex> lock(s->mutex);
      Range r = s->params->range();
      if(!gpu) {
        s->params->update(grads.slice(r.offset, r.size), work.lr);
        continue;
      }
      onShardLane([&] {
        Backend& owner = backendFor(s->device);
        owner.wait(gradsReady_[d].get());
        for(auto& p : s->pulled)  // no pull still reads the values this update overwrites
          owner.wait(p.get());
        Tensor g = grads.slice(r.offset, r.size);
        if(g.device != s->device) {
          if(!s->staging)
            s->staging = std::make_unique<FlatBuffer>(s->device, Type::float32, r.size);
          kernels::copyUnordered(s->staging->all(), g);
          g = s->staging->all();
        }
        s->params->update(g, work.lr);
        owner.record(s->updated.get());
      });
      mine.wait(s->updated.get());  // the next backward overwrites the gradients the update reads
    }
    return {ce, work.batch.trgWords, size_t(work.batch.sentences)};
  }

  Options options_;
  std::string costType_;
  float clipNorm_, emaAlpha_;
  uint64_t seed_;
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<std::unique_ptr<DeviceEvent>> gradsReady_;  // GPU: after device d's clipped gradients
  std::vector<std::thread> threads_;
  BatchQueue queue_;  // at most one batch waiting per device
};

}  // namespace

std::unique_ptr<GraphGroup> createAsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                  uint64_t seed, const std::vector<Device>& devices) {
  return std::make_unique<AsyncGraphGroup>(o, srcVocab, trgVocab, seed, devices);
}

}  // namespace marian
