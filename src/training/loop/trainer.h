#pragma once
// defines: marian::train — `marian --config train.yml`: data, model, graph group, schedule,
// validation and checkpoints, resuming from model.npz.progress.yml when it exists.
#include "common/options.h"

namespace marian {

class Transport;

// `ranks`: the processes of an mpirun job (null for one process), which shuffle, initialise,
// stop and fail together.
void train(const Options& options, Transport* ranks);

}  // namespace marian
