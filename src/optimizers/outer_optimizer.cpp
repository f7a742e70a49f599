#include "optimizers/outer_optimizer.h"

#include "common/error.h"

namespace marian {

OuterOptimizer::OuterOptimizer(const OuterSettings& settings, std::vector<float> start)
    : settings_(settings), start_(std::move(start)), momentum_(start_.size(), 0.f) {}

const std::vector<float>& OuterOptimizer::step(const std::vector<float>& pseudoGradient) {
  ABORT_IF(pseudoGradient.size() != start_.size(), "Outer step of {} values on a range of {}", pseudoGradient.size(),
           start_.size());
  const float lr = settings_.learnRate, mu = settings_.momentum;
  for(size_t i = 0; i < start_.size(); ++i) {
    float g = pseudoGradient[i];
    momentum_[i] = mu * momentum_[i] + g;
    start_[i] -= lr * (settings_.nesterov ? g + mu * momentum_[i] : momentum_[i]);
  }
  return start_;
}

}  // namespace marian
