#pragma once
// defines: marian::ModelState — everything that continues a run, in ONE global layout (indices
// of the flat parameter vector), whatever shards, devices and ranks held it: a checkpoint written
// from 2 ranks loads on 1 or 3, each new shard taking its own range (re-sharding on load).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/equal_split.h"

namespace marian {

struct ModelState {
  size_t n = 0;                  // parameters in the model
  int ranks = 1;                 // the layout it was saved from: MPI ranks, devices per rank
  size_t devices = 1;
  // Parameters::layoutFingerprint() of the model it belongs to ("" in memory): the flat arrays
  // below are in that order, so a checkpoint resumes only into the same layout.
  std::string parameterLayout;
  std::vector<float> values;     // the parameters
  std::vector<float> smoothed;   // their moving average (--exponential-smoothing), or empty
  std::map<std::string, std::vector<float>> optimizer;  // per-parameter optimizer arrays (n each)
  // Each saved shard's optimizer step count: shards of an asynchronous server can be a few
  // updates apart when they are read one after the other.
  std::vector<std::pair<Range, uint64_t>> optimizerSteps;
  // Communication state, named by the graph group that wrote it ("residual.rank1" ...): n values
  // each, and counters (selector calls, versions) that make a resume exact.
  std::map<std::string, std::vector<float>> extras;
  std::map<std::string, uint64_t> counters;

  // The counter that holds the step the optimizers' statistics were last reset at (Optimizer::resetStatistics).
  static constexpr const char* kOptimizerStatisticsFrom = "optimizer-statistics-from";
  // --no-optimizer-reload, as Marian's: the model's weights (Marian reads model.npz: the moving
  // average, where there is one) and the step counts, not the optimizer's arrays (of any
  // optimizer: another --optimizer resumes too), its statistics starting at the saved steps.
  void startOptimizerAfresh();

  // The step count saved for the shard that held parameter `offset`.
  uint64_t stepsAt(size_t offset) const {
    for(const auto& [range, steps] : optimizerSteps)
      if(offset >= range.offset && offset < range.end())
        return steps;
    return optimizerSteps.empty() ? 0 : optimizerSteps.front().second;
  }

  // scale x the sum of the extras named prefix + a number, in the numbers' order: the residuals
  // every saved rank or client held back, owed once to a run of another layout. Empty when there
  // is none; one that does not hold n values is an error naming it.
  std::vector<float> sumOfExtras(const std::string& prefix, float scale) const;
  // Whether any extra's name begins with `prefix`.
  bool hasExtras(const std::string& prefix) const {
    auto first = extras.lower_bound(prefix);  // the first name with that prefix, if any
    return first != extras.end() && first->first.compare(0, prefix.size(), prefix) == 0;
  }

  // "" when the parameters, their moving average and the optimizer arrays are all finite; else
  // which array holds the first value that is not, and where (a diverged update leaves NaNs there,
  // and a save must not put them over the last good checkpoint).
  std::string firstNotFinite() const;

  // Bytes for the wire (a parameter server's shard state travels to rank 0) and back.
  std::vector<char> pack() const;
  static ModelState unpack(const std::vector<char>& bytes);
  // Takes a part saved by the shard of `range`: that range of every n-sized array it shares with
  // this state, the whole of arrays this state lacks, an array cut to the range (cutTo) placed
  // there, its step counts and counters.
  void merge(ModelState&& part, Range range);
  // Cuts every array of n values to `range`: a shard's own part of them (the rest is other shards'),
  // so that it travels to rank 0 as its range alone, not padded to the model (merge places it).
  void cutTo(Range range);
};

}  // namespace marian
