#include "training/loop/stop_signal.h"

#include <atomic>
#include <csignal>

#include "common/error.h"

namespace marian {

namespace {
std::atomic<bool> stopRequested{false};
extern "C" void onSigterm(int) { stopRequested.store(true); }
}  // namespace

void installStopSignal(const std::string& mode) {
  if(mode == "save-and-exit")
    std::signal(SIGTERM, onSigterm);
}

bool signalled() { return stopRequested.load(); }

}  // namespace marian
