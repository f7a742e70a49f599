// marian: trains a translation model, `marian --config train.yml [options]`.
#include <cstdio>
#include <cstdlib>

#include "comm/mpi_transport.h"
#include "common/error.h"
#include "common/fault_point.h"
#include "common/logging.h"
#include "common/options.h"
#include "training/loop/ranks_in_process.h"
#include "training/loop/trainer.h"

namespace {
// mpirun tells its processes their world size in the environment (OpenMPI, PMIx, Hydra).
bool launchedByMpirun() {
  for(const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if(std::getenv(name))
      return true;
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace marian;
  try {
    std::optional<Options> started = startProgram(argc, argv, ProgramMode::training);
    if(!started)
      return 0;
    const Options& options = *started;
    if(int ranks = options.get<int>("ranks-in-process")) {
      ABORT_IF(launchedByMpirun(), "--ranks-in-process {} runs the ranks as threads of one process: start it without "
                                   "mpirun", ranks);
      logProgramStart(argc, argv, options, true);
      trainOnRanksInProcess(options, ranks);
      return 0;
    }
    if(options.get<bool>("multi-node") || launchedByMpirun()) {
      double timeout = double(options.get<int>("multi-node-timeout"));  // every wait on another rank
      const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
      faultPoint("start", rank ? std::atoi(rank) : 0);
      MpiTransport& mpi = MpiTransport::start(&argc, &argv, timeout);
      mpi.setPeerTimeout(timeout);
      if(mpi.rank() > 0)  // rank 0 keeps Marian's lines; the others say who they are
        logging::setPrefix("[rank " + std::to_string(mpi.rank()) + "] ");
    }
    // rank 0 logs as Marian does; the others only their host (a launcher names a lost node by it)
    logProgramStart(argc, argv, options, !MpiTransport::instance() || MpiTransport::instance()->rank() == 0);
    train(options, MpiTransport::instance());
  } catch(const std::exception& e) {
    if(MpiTransport* mpi = MpiTransport::instance())  // one failing rank ends the whole job
      mpi->abort(e.what());
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
