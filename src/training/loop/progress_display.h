#pragma once
// defines: marian::ProgressDisplay — Marian's training line every --disp-freq:
//   Ep. 1 : Up. 500 : Sen. 32,000 : Cost 4.12345678 : Time 12.34s : 4567.89 words/s : gNorm 0.5432
// with the Cost as Marian's scheduler shows it for each --cost-type, the gradient norm's moving
// average (TrainingState::gradientNormAvg), " : L.r. 3.0000e-04" with --lr-report, and what the
// graph group adds (bytes on the wire, the share of communication hidden).
#include <chrono>
#include <cstdint>
#include <string>

#include "common/options.h"
#include "training/loop/training_state.h"

namespace marian {

class ProgressDisplay {
public:
  explicit ProgressDisplay(const Options& options);
  // One update's summed cost, target labels, --guided-alignment points, sentences and target words.
  void add(double ceSum, uint64_t labels, size_t alignmentPoints, uint64_t sentences, uint64_t words);
  // The line for what was added since the last one (lr: the next update's rate; status: the
  // graph group's), which starts the counts again.
  void show(const TrainingState& state, float lr, uint64_t lastUpdateLabels, const std::string& status);
  // The time of the next line counts from now.
  void restartClock() { last_ = std::chrono::steady_clock::now(); }

private:
  // per label (ce-mean-words; ce-sum with --disp-label-counts adds "* labels since the last
  // display @ labels of the last update after labels in all"), per update (ce-sum without label
  // counts) or per sentence (ce-mean)
  std::string costText(const TrainingState& state, uint64_t lastUpdateLabels) const;
  std::string costType_;
  bool labelCounts_, lrReport_;
  double alignmentWeight_;  // --guided-alignment-weight: Marian's cost counts a point as that much of a label
  std::chrono::steady_clock::time_point last_;
  double costSum_ = 0, labels_ = 0;  // the labels the cost is per: target labels and weighted points
  uint64_t sentences_ = 0, updates_ = 0, words_ = 0;
};

}  // namespace marian
