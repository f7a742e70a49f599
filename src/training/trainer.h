#pragma once
// defines: marian::train — `marian --config train.yml`: data, model, graph group, schedule,
// validation and checkpoints, resuming from model.npz.progress.yml when it exists.
#include "common/options.h"

namespace marian {

void train(const Options& options);

}  // namespace marian
