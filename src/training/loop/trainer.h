#pragma once
// defines: marian::train — `marian --config train.yml`: data, model, graph group, schedule,
// validation and checkpoints, resuming from model.npz.progress.yml when it exists.
#include "common/options.h"

namespace marian {

class Transport;
struct TrainingData;

// `ranks`: the processes of an mpirun job or the threads of --ranks-in-process (null for one
// process), which shuffle, initialise, stop and fail together. `loaded`: the corpus and
// vocabularies, when the caller has loaded them once for ranks that share this process (null:
// loaded here from the options).
void train(const Options& options, Transport* ranks, const TrainingData* loaded = nullptr);

}  // namespace marian
