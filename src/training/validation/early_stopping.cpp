#include "training/validation/early_stopping.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"
#include "training/validation/validator.h"

namespace marian {

EarlyStopping::EarlyStopping(const Options& o)
    : metrics_(o.get<std::vector<std::string>>("valid-metrics")), patience_(size_t(o.get<int>("early-stopping"))),
      resetStalled_(o.get<bool>("valid-reset-stalled")), resetAll_(o.get<bool>("valid-reset-all")),
      on_(o.get<std::string>("early-stopping-on")) {
  // as Marian: the i-th value for the i-th metric, the last given for those after it
  std::vector<float> given = o.get<std::vector<float>>("early-stopping-epsilon");
  for(size_t i = 0; i < metrics_.size(); ++i)
    epsilons_.push_back(given.empty() ? 0.f : given[std::min(i, given.size() - 1)]);
}

void EarlyStopping::resume(TrainingState& state) const {
  if(!resetStalled_ && !resetAll_)
    return;
  state.maxStalled = 0;
  for(auto& [metric, v] : state.validators) {
    v.stalled = 0;
    if(resetAll_)
      v.hasBest = false;
  }
  LOG(info, "[valid] {}: the validation {} start again", resetAll_ ? "--valid-reset-all" : "--valid-reset-stalled",
      resetAll_ ? "metrics' stall counts and best values" : "metrics' stall counts");
}

std::vector<std::string> EarlyStopping::record(const std::vector<double>& scores, TrainingState& state) const {
  std::vector<std::string> best;
  for(size_t i = 0; i < metrics_.size(); ++i) {
    const std::string& metric = metrics_[i];
    ValidatorState& v = state.validators[metric];
    // in float, as Marian compares them (a NaN score is never a best)
    float score = float(scores[i]), last = float(v.lastBest);
    float gain = !v.hasBest ? INFINITY : Validator::higherIsBetter(metric) ? score - last : last - score;
    if(gain > 0.f) {  // a new best, kept (--keep-best) even where it gains less than epsilon
      // as Marian: by less than epsilon a stall (which the first validation never is)
      v.stalled = epsilons_[i] != 0.f && gain < epsilons_[i] ? v.stalled + 1 : 0;
      v.lastBest = scores[i];
      v.hasBest = true;
      best.push_back(metric);
    } else {
      ++v.stalled;
    }
    std::string verdict = v.stalled == 0 ? "new best"
                                         : "stalled " + std::to_string(v.stalled) + " times (last best: " +
                                               formatNumber("%g", v.lastBest) + ")";
    LOG(info, "[valid] Ep. {} : Up. {} : {} : {} : {}", state.epochs, state.batches, metric,
        formatNumber("%g", scores[i]), verdict);
  }
  return best;
}

size_t EarlyStopping::stalled(const TrainingState& state) const {
  if(metrics_.empty())
    return 0;
  if(on_ == "first")
    return state.stalled(metrics_[0]);
  size_t least = state.stalled(metrics_[0]), most = least;
  for(const std::string& m : metrics_) {
    least = std::min(least, state.stalled(m));
    most = std::max(most, state.stalled(m));
  }
  return on_ == "all" ? least : most;
}

bool EarlyStopping::stops(const TrainingState& state) const { return patience_ && stalled(state) >= patience_; }

std::string EarlyStopping::reason(const TrainingState& state) const {
  std::string stalled;
  for(const std::string& m : metrics_)
    if(state.stalled(m) >= patience_)
      stalled += (stalled.empty() ? "" : ", ") + m;
  return format("{} stalled {} times (--early-stopping-on {})", stalled, patience_, on_);
}

}  // namespace marian
