// Multi-node training with a sharded parameter server (seed 004 §3.3-3.8): every rank is a node
// that serves one shard of the parameters (a server thread, its update split over the node's
// devices) and runs one client per device. A client computes gradients on its batches and
// exchanges them with every shard. With --multi-node-overlap the exchange runs on the client's
// communication thread with double buffers (Algorithms 5/6): the compute thread never waits
// for the network, sums gradients while the exchange is in flight, and swaps buffers when the
// communication thread is idle (or after --multi-node-max-delay steps).
#include <chrono>
#include <mutex>

#include "comm/ps/server_loop.h"
#include "comm/ps/shard_client.h"
#include "comm/ps/shard_reader.h"
#include "common/logging.h"
#include "common/timeline.h"
#include "optimizers/gradient_clipping.h"
#include "tensors/kernels.h"
#include "training/graph_groups/device_threads.h"
#include "training/ps/ps_device_client.h"
#include "tensors/devices_from_options.h"
#include "training/graph_groups/device_worker.h"
#include "training/graph_groups/dropout_seeds.h"
#include "training/exchange/outer_rounds.h"
#include "training/graph_groups/graph_group.h"

namespace marian {

namespace {

using Clock = std::chrono::steady_clock;

class MultiNodeGraphGroup : public GraphGroup {
public:
  MultiNodeGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed, Transport& ranks)
      : options_(o), transport_(ranks),
        normalizeGradient_(o.get<bool>("normalize-gradient")), clipNorm_(o.get<float>("clip-norm")),
        seed_(seed), singleClient_(o.get<bool>("multi-node-single-client")),
        keep_(1.0 - double(o.get<float>("grad-dropping-rate"))) {
    ABORT_IF(keep_ <= 0.0 || keep_ > 1.0, "--grad-dropping-rate must be in [0, 1)");
    PsClientSettings& c = clientSettings_;
    c.overlap = o.get<bool>("multi-node-overlap");
    c.maxDelay = size_t(o.get<int>("multi-node-max-delay"));
    c.applySummed = o.get<bool>("multi-node-apply-summed");
    c.localOptimizer = o.get<bool>("multi-node-local-optimizer");
    c.timeout = double(o.get<int>("multi-node-timeout"));
    c.compression = Compression::fromOptions(o, keep_);
    ABORT_IF(c.localOptimizer && c.compression.local != LocalGradients::off,
             "--multi-node-local-optimizer and --local-gradients both move the clients' own parameters: give one");
    // without the double buffers the reply follows the step at once: a dense one replaces the local
    // step, and sparse deltas would be added to it, so the local steps would pile up in the copy
    ABORT_IF(c.localOptimizer && !c.overlap,
             "--multi-node-local-optimizer moves a client's parameters while its exchange is under way: it needs "
             "--multi-node-overlap");
    if(c.compression.local != LocalGradients::off && (keep_ >= 1.0 || c.overlap)) {
      if(transport_.rank() == 0)
        LOG(warn, "[training] --local-gradients has no effect {}", keep_ >= 1.0
                  ? "without gradient dropping (--grad-dropping-rate 0): the clients send everything"
                  : "with --multi-node-overlap (the double buffers apply summed gradients instead)");
      c.compression.local = LocalGradients::off;
    }
    std::vector<Device> devices = devicesFromOptions(o);
    c.clients = int(devices.size()) * transport_.size();
    for(const Device& device : devices)
      workers_.push_back(std::make_unique<DeviceWorker>(device, o, srcVocab, trgVocab, seed));
    threads_ = std::make_unique<DeviceThreads>(devices.size());
    lastStatus_ = Clock::now();
  }

  ~MultiNodeGraphGroup() override {
    try {
      shutdown();
    } catch(const std::exception& e) {  // the job stopped: the error that stopped it is what it prints
      LOG(debug, "[training] Rank {}: the parameter server's shutdown: {}", transport_.rank(), e.what());
    }
  }

  int rank() const override { return transport_.rank(); }
  int ranks() const override { return transport_.size(); }
  void announceEnd() override {
    if(server_)
      server_->announceEnd();
  }
  bool endAnnounced() override {
    for(auto& c : clients_)
      if(c->shardClient().heardEnd())
        return true;
    return false;
  }

  void initialize(const Batch& sample) override {
    for(auto& w : workers_)
      w->initialize(sample);
    std::vector<float> initial = kernels::toHost(workers_[0]->params().values());
    layout_ = {initial.size(), transport_.size()};
    size_t devices = workers_.size();
    Options o = options_;
    shard_ = std::make_unique<ServerShard>(
        transport_.rank(), layout_.node(transport_.rank()), layout_.total, initial, devices,
        [o] { return createOptimizer(o); },
        devices * size_t(transport_.size()), keep_, o.get<float>("exponential-smoothing"), seed_);
    for(size_t d = 0; d < devices; ++d) {
      int id = int(jobDevice(transport_.rank(), devices, d));  // the client: the job's device
      kernels::fromHost(workers_[d]->params().values(), initial);
      clients_.push_back(std::make_unique<PsDeviceClient>(
          id, workers_[d]->device(), layout_, transport_, *shard_, clientSettings_, seed_ * 31 + uint64_t(id), initial,
          [o] { return createOptimizer(o); }, singleClient_ ? &rankMutex_ : nullptr,
          [this](std::exception_ptr e) { threads_->fail(e); }));
      stats_.push_back(std::make_unique<ComputeStats>());
    }
    // serving once the clients whose state it reads (nodeState) are all there
    server_ = std::make_unique<ServerLoop>(transport_, *shard_, [this] { return nodeState(); },
                                           clientSettings_.timeout);
    threads_->start([this](size_t d, const BatchWork& work) { return step(d, work); },
                    [](size_t d) { return "client " + std::to_string(d) + " compute"; });
  }

  StepStats update(const Batch& batch, uint64_t update, float lr, uint64_t) override {
    return threads_->update(batch, update, lr);
  }

  // This rank's batches are done and, after the barrier, every rank's.
  void finish() override {
    threads_->waitIdle();
    for(auto& c : clients_)  // a last exchange of what the overlap left summed
      c->flush();
    if(!finished_barrier_) {
      transport_.barrier(transport_.peerTimeout(), "the end of training");
      finished_barrier_ = true;
    }
  }

  const Parameters& layout() override { return workers_[0]->params(); }

  // The current parameters of every shard (rank 0 validates and saves them).
  std::vector<float> values(bool smoothed) override {
    // Validation on a GPU uses the compute threads' streams: let them finish their batches first.
    if(workers_[0]->device().type == DeviceType::gpu)
      threads_->waitIdle();
    std::vector<float> all(layout_.total);
    ShardReader reader(transport_, int(workers_.size()), clientSettings_.timeout);
    for(int s = 0; s < layout_.nodes; ++s)
      placeRange(all, layout_.node(s), s == transport_.rank() ? shard_->values(smoothed) : reader.values(s, smoothed));
    return all;
  }

  // Rank 0 gathers every node's state: its own directly, the others' through their server
  // threads (each node's shard and clients are read under their locks, so each node's part is
  // consistent; nodes keep training meanwhile, as asynchronous SGD does).
  ModelState saveState() override {
    if(workers_[0]->device().type == DeviceType::gpu)
      threads_->waitIdle();
    ModelState state;
    state.n = layout_.total;
    state.ranks = transport_.size();
    state.devices = workers_.size();
    if(transport_.rank() != 0)
      return state;
    ShardReader reader(transport_, int(workers_.size()), clientSettings_.timeout);
    for(int s = 0; s < layout_.nodes; ++s)
      state.merge(s == transport_.rank() ? nodeState() : reader.state(s), layout_.node(s));
    return state;
  }

  // Every rank restores its own shard and clients from the checkpoint (which every rank reads):
  // the global layout re-shards by itself. On the same clients the dropping residuals and the
  // server's record of each client come back exactly; on another layout the residuals of all
  // saved clients are summed into client 0 of rank 0 (nothing owed is lost or sent twice) and
  // every client starts from the restored parameters.
  void restore(const ModelState& state) override {
    OuterRounds::refuseFragmentsInFlight(state);
    bool sameClients = state.ranks == transport_.size() && state.devices == workers_.size();
    shard_->restoreFrom(state, sameClients);
    if(transport_.rank() == 0) {  // what a checkpoint does not hold
      std::vector<std::string> lost;
      if(clientSettings_.overlap)
        lost.push_back("gradients summed but not yet sent (--multi-node-overlap)");
      if(clientSettings_.localOptimizer)
        lost.push_back("the clients' local optimizer states (--multi-node-local-optimizer)");
      if(clientSettings_.compression.local != LocalGradients::off)
        lost.push_back("the clients' local optimizer states and their own steps since their last full reply "
                       "(--local-gradients)");
      if(!clientSettings_.compression.compresses() && ShardClient::savedResiduals(state))
        LOG(warn, "[training] Resumed without --grad-dropping-rate: the checkpoint's dropping residuals (gradients "
                  "not yet sent) are not applied");
      for(const std::string& what : lost)
        LOG(warn, "[training] Resumed: {} start at zero", what);
    }
    for(size_t d = 0; d < clients_.size(); ++d)
      clients_[d]->restoreFrom(state, sameClients, workers_[d]->params().values());
    if(!sameClients && transport_.rank() == 0)
      LOG(info, "[training] Checkpoint of {} rank(s) x {} device(s) resumed on {} x {}: re-sharded; the saved "
                "dropping residuals are summed into client 0",
          state.ranks, state.devices, transport_.size(), workers_.size());
    // the servers answer from initialize() on: no client may push to a shard that still holds the
    // initial parameters (its reply would train a batch on them, and its gradient would reach
    // the other, restored shards)
    transport_.barrier(transport_.peerTimeout(), "the ranks' restore of their shards");
  }

  std::string statusLine() override {
    auto now = Clock::now();
    double wall = std::chrono::duration<double>(now - lastStatus_).count();
    ExchangeStats s;
    double busy = 0;
    uint64_t steps = 0;
    for(size_t d = 0; d < clients_.size(); ++d) {
      ExchangeStats cs = clients_[d]->shardClient().takeStats();
      s.exchanges += cs.exchanges;
      s.staleness += cs.staleness;
      s.sent += cs.sent;
      s.received += cs.received;
      ComputeStats& c = *stats_[d];
      std::lock_guard<std::mutex> lock(c.mutex);
      busy += c.busySeconds;
      steps += c.steps;
      c.busySeconds = 0;
      c.steps = 0;
    }
    lastStatus_ = now;
    // the clients' pushes and the replies they got on the wire (the node's own shard is called
    // directly), not the reads of every shard for validation and checkpoints between them
    return trafficPerUpdate(double(s.sent), double(s.received), steps) +
           format(" : Util {}% : Staleness {}", formatNumber("%.1f", 100.0 * busy / std::max(wall * double(clients_.size()), 1e-9)),
                  formatNumber("%.2f", s.exchanges ? double(s.staleness) / double(s.exchanges) : 0.0));
  }

private:
  struct ComputeStats {  // a compute thread's, for the status line
    std::mutex mutex;
    double busySeconds = 0;
    uint64_t steps = 0;
  };

  // This node's part of a checkpoint: its shard's arrays, cut to its range (the rest would be
  // zeros sent to rank 0: nodes x the model per array), and its clients' residuals, whole.
  ModelState nodeState() {
    ModelState state;
    state.n = layout_.total;
    state.ranks = transport_.size();
    state.devices = workers_.size();
    shard_->saveTo(state);
    state.cutTo(layout_.node(transport_.rank()));
    for(auto& c : clients_)
      c->shardClient().saveTo(state);
    return state;
  }

  // One batch on device d: gradients, checked and clipped, then the device's client takes them.
  StepStats step(size_t d, const BatchWork& work) {
    DeviceWorker& w = *workers_[d];
    auto begin = Clock::now();
    Tensor grads = w.params().grads();
    uint64_t masks = batchRandomSeed(seed_, work.update, jobDevice(rank(), workers_.size(), d));
    double ce = w.computeGradients(work.batch.split(), gradientScale(normalizeGradient_, work.batch.trgWords), masks);
    clipGradients(grads, clipNorm_, work.update);
    auto computeEnd = Clock::now();
    clients_[d]->step(grads, w.params().values(), work.lr);
    transport_.noteStep(std::chrono::duration<double>(computeEnd - begin).count(),
                        std::chrono::duration<double>(Clock::now() - computeEnd).count());
    ComputeStats& c = *stats_[d];
    std::lock_guard<std::mutex> lock(c.mutex);
    c.busySeconds += std::chrono::duration<double>(computeEnd - begin).count();
    c.steps += 1;
    return StepStats::of(work.batch, ce);
  }

  // Stops the threads; the servers stop only when every rank is done with them.
  void shutdown() {
    if(shutDown_)
      return;
    shutDown_ = true;
    threads_->stop();
    for(auto& c : clients_)
      c->stop();
    if(server_) {
      std::exception_ptr failed;  // the server thread stops either way: it must not outlive the shard
      try {
        transport_.barrier(transport_.peerTimeout(), "the shutdown of the servers");
      } catch(const std::exception&) {
        failed = std::current_exception();
      }
      server_->stop();
      if(failed)
        std::rethrow_exception(failed);
    }
  }

  Options options_;
  Transport& transport_;
  bool normalizeGradient_;
  float clipNorm_;
  uint64_t seed_;
  bool singleClient_;
  double keep_;
  PsClientSettings clientSettings_;  // local gradients off where they cannot act

  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  ShardLayout layout_;
  std::unique_ptr<ServerShard> shard_;
  std::unique_ptr<ServerLoop> server_;
  std::vector<std::unique_ptr<PsDeviceClient>> clients_;
  std::vector<std::unique_ptr<ComputeStats>> stats_;
  std::mutex rankMutex_;  // --multi-node-single-client

  std::unique_ptr<DeviceThreads> threads_;
  bool shutDown_ = false, finished_barrier_ = false;
  Clock::time_point lastStatus_;
};

}  // namespace

std::unique_ptr<GraphGroup> createMultiNodeGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                      uint64_t seed, Transport& ranks) {
  return std::make_unique<MultiNodeGraphGroup>(o, srcVocab, trgVocab, seed, ranks);
}

}  // namespace marian
