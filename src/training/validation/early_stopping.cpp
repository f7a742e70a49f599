#include "training/validation/early_stopping.h"

#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"
#include "training/validation/validator.h"

namespace marian {

EarlyStopping::EarlyStopping(const Options& o)
    : metrics_(o.get<std::vector<std::string>>("valid-metrics")), patience_(size_t(o.get<int>("early-stopping"))),
      on_(o.get<std::string>("early-stopping-on")) {}

std::vector<std::string> EarlyStopping::record(const std::vector<double>& scores, TrainingState& state) const {
  std::vector<std::string> best;
  for(size_t i = 0; i < metrics_.size(); ++i) {
    const std::string& metric = metrics_[i];
    ValidatorState& v = state.validators[metric];
    bool better = !v.hasBest || (Validator::higherIsBetter(metric) ? scores[i] > v.lastBest : scores[i] < v.lastBest);
    std::string verdict;
    if(better) {
      v.lastBest = scores[i];
      v.hasBest = true;
      v.stalled = 0;
      verdict = "new best";
      best.push_back(metric);
    } else {
      ++v.stalled;
      verdict = "stalled " + std::to_string(v.stalled) + " times (last best: " + formatNumber("%g", v.lastBest) + ")";
    }
    LOG(info, "[valid] Ep. {} : Up. {} : {} : {} : {}", state.epochs, state.batches, metric,
        formatNumber("%g", scores[i]), verdict);
  }
  return best;
}

bool EarlyStopping::stops(const TrainingState& state) const {
  if(!patience_ || metrics_.empty())
    return false;
  if(on_ == "first")
    return state.stalled(metrics_[0]) >= patience_;
  bool all = true, any = false;
  for(const std::string& m : metrics_) {
    bool stalled = state.stalled(m) >= patience_;
    all = all && stalled;
    any = any || stalled;
  }
  return on_ == "all" ? all : any;
}

std::string EarlyStopping::reason(const TrainingState& state) const {
  std::string stalled;
  for(const std::string& m : metrics_)
    if(state.stalled(m) >= patience_)
      stalled += (stalled.empty() ? "" : ", ") + m;
  return format("{} stalled {} times (--early-stopping-on {})", stalled, patience_, on_);
}

}  // namespace marian
