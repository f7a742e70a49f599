#include "training/loop/progress_display.h"

#include <algorithm>

#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"

namespace marian {

ProgressDisplay::ProgressDisplay(const Options& o)
    : costType_(o.get<std::string>("cost-type")), labelCounts_(o.get<bool>("disp-label-counts")),
      lrReport_(o.get<bool>("lr-report")), alignmentWeight_(o.get<float>("guided-alignment-weight")),
      last_(std::chrono::steady_clock::now()) {}

void ProgressDisplay::add(double ceSum, uint64_t labels, size_t alignmentPoints, uint64_t sentences, uint64_t words) {
  costSum_ += ceSum;
  labels_ += double(labels) + alignmentWeight_ * double(alignmentPoints);
  sentences_ += sentences;
  updates_ += 1;
  words_ += words;
}

std::string ProgressDisplay::costText(const TrainingState& state, uint64_t lastUpdateLabels) const {
  auto fixed8 = [](double v) { return formatNumber("%.8f", v); };
  if(costType_ == "ce-mean")
    return fixed8(sentences_ ? costSum_ / double(sentences_) : 0.0);
  if(costType_ == "ce-sum" && !labelCounts_)
    return fixed8(updates_ ? costSum_ / double(updates_) : 0.0);
  std::string perLabel = fixed8(labels_ > 0 ? costSum_ / labels_ : 0.0);
  if(costType_ != "ce-sum")
    return perLabel;
  return perLabel + " * " + grouped(uint64_t(labels_)) + " @ " + grouped(lastUpdateLabels) + " after " +
         grouped(state.labelsTotal);
}

void ProgressDisplay::show(const TrainingState& state, float lr, uint64_t lastUpdateLabels, const std::string& status) {
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - last_).count();
  std::string rate = lrReport_ ? " : L.r. " + formatNumber("%.4e", lr) : std::string();
  LOG(info, "Ep. {} : Up. {} : Sen. {} : Cost {} : Time {}s : {} words/s : gNorm {}{}{}", state.epochs, state.batches,
      grouped(state.samplesEpoch), costText(state, lastUpdateLabels), formatNumber("%.2f", seconds),
      formatNumber("%.2f", double(words_) / std::max(seconds, 1e-9)), formatNumber("%.4f", state.gradientNormAvg),
      rate, status);
  last_ = now;
  costSum_ = labels_ = 0;
  sentences_ = updates_ = words_ = 0;
}

}  // namespace marian
