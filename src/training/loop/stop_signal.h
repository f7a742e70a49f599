#pragma once
// defines: installStopSignal and signalled — Marian's --sigterm: with save-and-exit a SIGTERM
// (a cluster scheduler's preemption) lets the current update finish, then the run saves and
// stops; with exit-immediately the default action ends the process (the last checkpoint stays).
#include <string>

namespace marian {

void installStopSignal(const std::string& mode);  // an unknown mode is an error naming it
bool signalled();

}  // namespace marian
