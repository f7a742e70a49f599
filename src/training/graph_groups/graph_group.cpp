#include "training/graph_groups/graph_group.h"

#include "common/logging.h"
#include "tensors/backend.h"
#include "tensors/devices_from_options.h"
#include "training/exchange/gradient_allreducer.h"
#include "training/exchange/outer_rounds.h"
#include "training/graph_groups/cost_scaling.h"
#include "training/graph_groups/mixed_precision.h"

namespace marian {

void GraphGroup::idleUpdate(uint64_t update) {
  ABORT("Update {}: this graph group has no idle update (its ranks agree before every update)", update + 1);
}

float gradientScale(bool normalizeGradient, uint64_t labels) {
  return normalizeGradient ? 1.f / float(labels) : 1.f;
}

std::vector<Batch> deviceShare(const Batch& batch, size_t d, size_t n) {
  if(n == 1)
    return batch.split();
  std::vector<Batch> share;
  for(const Batch& part : batch.split())
    if(auto [begin, end] = deviceSlice(part.sentences, d, n); begin < end)
      share.push_back(part.slice(begin, end - begin));
  return share;
}

std::unique_ptr<GraphGroup> createSyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                                                 const std::vector<Device>& devices, Transport* ranks);

std::unique_ptr<GraphGroup> createAsyncGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                  uint64_t seed, const std::vector<Device>& devices);

std::unique_ptr<GraphGroup> createMultiNodeGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab,
                                                      uint64_t seed, Transport& ranks);

std::unique_ptr<GraphGroup> createGraphGroup(const Options& o, size_t srcVocab, size_t trgVocab, uint64_t seed,
                                             Transport* mpi) {
  setBlasThreads(devicesFromOptions(o));
  setGpuTf32(o.get<bool>("tf32"));
  productTypeFromOptions(o, devicesFromOptions(o));  // (checks the options before any device starts)
  bool costScaling = CostScaling::fromOptions(o).has_value();
  uint64_t localSteps = OuterRounds::localSteps(o);  // (checks its options)
  if(o.get<bool>("multi-node")) {
    ABORT_IF(!mpi, "--multi-node needs MPI: start it with mpirun");
    ABORT_IF(costScaling, "--cost-scaling (--fp16) runs with synchronous training (--sync-sgd or one device), not the "
                          "parameter server (--multi-node)");
    ABORT_IF(o.get<int>("powersgd-rank") > 0 || sendsOneBit(o),
             "--powersgd-rank, --onebit-adam and --zero-one-adam compress sync-SGD's allreduce (--sync-sgd); the parameter server "
             "(--multi-node) drops gradients with --grad-dropping-rate");
    return createMultiNodeGraphGroup(o, srcVocab, trgVocab, seed, *mpi);
  }
  validateAllreduceOptions(o);
  std::vector<Device> devices = devicesFromOptions(o);
  // as Marian's: a process of one device trains synchronously, so `mpirun -np N marian -c
  // train.yml` allreduces across the ranks without --sync-sgd
  bool ranks = mpi && mpi->size() > 1;
  ABORT_IF(ranks && devices.size() > 1 && !o.get<bool>("sync-sgd"),
           "Started on {} MPI ranks of {} devices each: train with --sync-sgd (allreduce across ranks) or --multi-node "
           "(parameter server)",
           mpi->size(), devices.size());
  if(ranks && !o.get<bool>("sync-sgd") && mpi->rank() == 0)
    LOG(info, "[training] {} MPI ranks of one device each train synchronously, as Marian's (--sync-sgd)", mpi->size());
  ABORT_IF(localSteps > 0 && devices.size() > 1 && !o.get<bool>("sync-sgd"),
           "--local-steps trains with --sync-sgd (the devices of a rank synchronised, the ranks apart)");
  if(devices.size() == 1 || o.get<bool>("sync-sgd"))
    return createSyncGraphGroup(o, srcVocab, trgVocab, seed, devices, mpi);
  ABORT_IF(costScaling, "--cost-scaling (--fp16) runs with synchronous training: add --sync-sgd for {} devices",
           devices.size());
  return createAsyncGraphGroup(o, srcVocab, trgVocab, seed, devices);
}

std::string trafficPerUpdate(double sent, double received, uint64_t updates) {
  double perUpdate = updates ? 1.0 / double(updates) : 0.0;
  return format(" : Sent {}/up : Recv {}/up", humanBytes(sent * perUpdate), humanBytes(received * perUpdate));
}

}  // namespace marian
