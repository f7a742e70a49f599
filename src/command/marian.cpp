// marian: trains a translation model, `marian --config train.yml [options]`.
#include <cstdio>

#include "comm/mpi_transport.h"
#include "common/logging.h"
#include "common/options.h"
#include "training/trainer.h"

int main(int argc, char** argv) {
  using namespace marian;
  try {
    ParsedOptions parsed = parseOptions(argc, argv, ProgramMode::training);
    if(parsed.exitNow) {
      std::fputs(parsed.print.c_str(), stdout);
      return 0;
    }
    const Options& options = parsed.options;
    logging::configure(options.get<std::string>("log", ""), options.get<bool>("quiet"));
    if(options.get<bool>("multi-node")) {
      MpiTransport& mpi = MpiTransport::start(&argc, &argv);
      if(mpi.rank() > 0)  // rank 0 keeps Marian's lines; the others say who they are
        logging::setPrefix("[rank " + std::to_string(mpi.rank()) + "] ");
    }
    train(options);
  } catch(const std::exception& e) {
    if(MpiTransport* mpi = MpiTransport::instance())  // one failing rank ends the whole job
      mpi->abort(e.what());
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
