#include "training/loop/ranks_in_process.h"

#include <algorithm>
#include <thread>

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
  // once, before any rank: a vocabulary is created by one writer, and OpenBLAS picks its kernels
  // before ranks call it
  TrainingData data = TrainingData::load(options);
  shareCoresWithRanksInProcess(ranks);
  setBlasThreads(devicesFromOptions(options));
  LOG(info, "[training] {} ranks in this process (--ranks-in-process), sharing its {} core(s)", ranks,
      std::max(1u, std::thread::hardware_concurrency()));
  InProcessNetwork network(ranks);
  for(int r = 0; r < ranks; ++r)
    network.rank(r).setPeerTimeout(double(options.get<int>("multi-node-timeout")));
  network.run([&](Transport& rank) {
    if(rank.rank() > 0)  // as mpirun's ranks say who they are
      logging::setThreadPrefix("[rank " + std::to_string(rank.rank()) + "] ");
    train(options, &rank, &data);
  });
}

}  // namespace marian
