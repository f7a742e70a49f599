#include "training/loop/ranks_in_process.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "comm/in_process_transport.h"
#include "common/error.h"
#include "common/logging.h"
#include "tensors/devices_from_options.h"
#include "training/loop/trainer.h"
#include "training/loop/training_data.h"

namespace marian {

void trainOnRanksInProcess(const Options& options, int ranks) {
  ABORT_IF(!options.get<std::string>("timeline").empty(),
           "--timeline traces one rank per process: it cannot go with --ranks-in-process {} (trace the ranks under "
           "mpirun instead)",
           ranks);
  std::vector<Device> devices = devicesFromOptions(options);
  ABORT_IF(onGpus(devices), "--ranks-in-process {} trains on CPU devices (--cpu-threads N): ranks that are threads of "
                            "one process would share each GPU's handles; give every rank its GPU under mpirun",
           ranks);
  // once, before any rank: a vocabulary is created by one writer, and OpenBLAS picks its kernels
  // before ranks call it
  TrainingData data = TrainingData::load(options);
  shareCoresWithRanksInProcess(ranks);
  setBlasThreads(devices);
  // each rank its own options: reading a YAML node is not safe from several threads
  std::vector<Options> perRank;
  for(int r = 0; r < ranks; ++r)
    perRank.push_back(options.clone());
  LOG(info, "[training] {} ranks in this process (--ranks-in-process), sharing its {} core(s)", ranks,
      std::max(1u, std::thread::hardware_concurrency()));
  InProcessNetwork network(ranks);
  for(int r = 0; r < ranks; ++r)
    network.rank(r).setPeerTimeout(double(options.get<int>("multi-node-timeout")));
  network.run([&](Transport& rank) {
    if(rank.rank() > 0)  // as mpirun's ranks say who they are
      logging::setThreadPrefix("[rank " + std::to_string(rank.rank()) + "] ");
    train(perRank[size_t(rank.rank())], &rank, &data);
  });
}

}  // namespace marian
