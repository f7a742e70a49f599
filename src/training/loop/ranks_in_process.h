#pragma once
// defines: marian::trainOnRanksInProcess — `marian --ranks-in-process N`: N ranks that are
// threads of this one process train as `mpirun -np N marian` does (the same batches, updates and
// Costs), over an InProcessNetwork instead of MPI. The corpus and vocabularies are loaded once and
// shared; each rank holds only its own model, optimizer state and batches; the ranks' devices
// share the cores. It measures words to a quality at many ranks on one machine
// (scripts/compare-configs --launcher in-process); its seconds are those of ranks taking turns on
// the same cores, not a cluster's.
#include "common/options.h"

namespace marian {

void trainOnRanksInProcess(const Options& options, int ranks);

}  // namespace marian
