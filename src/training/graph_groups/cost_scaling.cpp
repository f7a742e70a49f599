#include "training/graph_groups/cost_scaling.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"
#include "common/option_table.h"

namespace marian {

namespace {
// Marian v1.12's --fp16 and a bare --cost-scaling: the option's implicit values (8 10000 1 8, a
// constant factor of 8)
std::vector<std::string> mariansValues() {
  return option_table::implicitList(*option_table::ownSpec("cost-scaling", option_table::kTrain));
}

const std::string kFrequency = std::string(CostScaling::kSavedSchedule) + "-frequency";
const std::string kFiniteInARow = std::string(CostScaling::kSavedSchedule) + "-finite-in-a-row";
const std::string kSkipsInARow = std::string(CostScaling::kSavedSchedule) + "-skips-in-a-row";
}  // namespace

CostScaling::CostScaling(float factor, uint64_t frequency, float multiplier, float minimum)
    : initialFactor_(factor), factor_(factor), frequency_(frequency), multiplier_(multiplier), minimum_(minimum) {
  ABORT_IF(!(factor > 0.f) || !std::isfinite(factor), "--cost-scaling: the factor must be a positive number, not {}", factor);
  ABORT_IF(frequency == 0, "--cost-scaling: the frequency must be at least 1 update");
  ABORT_IF(!(multiplier >= 1.f) || !std::isfinite(multiplier), "--cost-scaling: the multiplier must be >= 1, not {}",
           multiplier);
  ABORT_IF(!(minimum > 0.f) || minimum > factor, "--cost-scaling: the minimum must be in (0, factor {}], not {}", factor,
           minimum);
}

std::optional<CostScaling> CostScaling::fromOptions(const Options& o) {
  std::vector<std::string> v = o.get<std::vector<std::string>>("cost-scaling");
  const std::vector<std::string> marians = mariansValues();
  if(v.empty() && o.get<bool>("fp16"))
    v = marians;
  if(v.empty())
    return std::nullopt;
  ABORT_IF(v.size() > 4, "--cost-scaling takes up to 4 values (factor, frequency, multiplier, minimum), got {}", v.size());
  for(size_t i = v.size(); i < 4; ++i)
    v.push_back(marians[i]);
  auto number = [&](size_t i, const char* what) {
    try {
      size_t end = 0;
      double x = std::stod(v[i], &end);
      if(end == v[i].size() || (end + 1 == v[i].size() && v[i][end] == 'f'))  // Marian writes 8.f
        return x;
    } catch(const std::exception&) {
    }
    ABORT("--cost-scaling: the {} '{}' is not a number", what, v[i]);
  };
  double frequency = number(1, "frequency");
  ABORT_IF(frequency < 1 || frequency > 1e15 || frequency != std::floor(frequency), "--cost-scaling: the frequency must be a whole number of updates, not {}",
           v[1]);
  return CostScaling(float(number(0, "factor")), uint64_t(frequency), float(number(2, "multiplier")),
                     float(number(3, "minimum")));
}

bool CostScaling::afterGradient(bool finite) {
  if(!finite) {
    factor_ = std::max(minimum_, factor_ / multiplier_);
    finiteInARow_ = 0;
    ++skipsInARow_;
    return false;
  }
  skipsInARow_ = 0;
  if(++finiteInARow_ % frequency_ == 0 && std::isfinite(factor_ * multiplier_))
    factor_ *= multiplier_;
  return true;
}

void CostScaling::saveTo(ModelState& state) const {
  state.extras[kSavedSchedule] = {factor_, initialFactor_, multiplier_, minimum_};
  state.counters[kFrequency] = frequency_;
  state.counters[kFiniteInARow] = finiteInARow_;
  state.counters[kSkipsInARow] = skipsInARow_;
}

void CostScaling::restoreFrom(const ModelState& state) {
  auto saved = state.extras.find(kSavedSchedule);
  if(saved == state.extras.end())
    return;  // saved without cost scaling: the options' start
  const std::vector<float>& v = saved->second;
  auto counter = [&](const std::string& name) {
    auto it = state.counters.find(name);
    ABORT_IF(it == state.counters.end(), "The checkpoint's cost scaling has no '{}'", name);
    return it->second;
  };
  ABORT_IF(v.size() != 4 || !(v[0] > 0.f) || !std::isfinite(v[0]),
           "The checkpoint's cost scaling ('{}') is not a factor and its options", kSavedSchedule);
  if(v[1] != initialFactor_ || v[2] != multiplier_ || v[3] != minimum_ || counter(kFrequency) != frequency_) {
    LOG(info, "[training] The checkpoint's cost scaling ran with --cost-scaling {} {} {} {}: these options start "
              "again from factor {}",
        v[1], counter(kFrequency), v[2], v[3], factor_);
    return;
  }
  factor_ = v[0];
  finiteInARow_ = counter(kFiniteInARow);
  skipsInARow_ = counter(kSkipsInARow);
  LOG(info, "[training] Cost scaling continues from the checkpoint: factor {}, {} finite update(s) in a row",
      factor_, finiteInARow_);
}

std::string CostScaling::describe() const {
  return format("cost scaling: factor {}, x{} after {} finite updates, /{} after one that is not (minimum {})",
                factor_, multiplier_, frequency_, multiplier_, minimum_);
}

}  // namespace marian
