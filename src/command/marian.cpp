// marian: trains a translation model, `marian --config train.yml [options]`.
#include <cstdio>

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
    train(options);
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
