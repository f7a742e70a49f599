#pragma once
// defines: marian::OuterOptimizer — the outer step of training with local steps (DiLoCo,
// Douillard et al. 2023): the parameters every rank started the round from, and the momentum,
// over one flat range on the host (as prime keeps them: the outer state in fp32 beside the
// device's). Given the ranks' averaged pseudo-gradient (round start minus their parameters) it
// moves the round start as PyTorch's SGD would with that gradient: momentum buffer
// m = mu m + g, then start -= lr (g + mu m) (Nesterov) or lr m (plain SGD with momentum).
// With lr 1 and momentum 0 the new start is the ranks' mean: model averaging.
#include <string>
#include <vector>

namespace marian {

struct OuterSettings {
  bool nesterov = true;
  float learnRate = 0.7f, momentum = 0.9f;  // DiLoCo's
};

class OuterOptimizer {
public:
  OuterOptimizer(const OuterSettings& settings, std::vector<float> start);

  // The averaged pseudo-gradient of the range -> the next round's start (returned).
  const std::vector<float>& step(const std::vector<float>& pseudoGradient);

  // The round's start; the momentum buffer (zeros before the first step).
  std::vector<float>& start() { return start_; }
  std::vector<float>& momentum() { return momentum_; }
  const std::vector<float>& start() const { return start_; }
  const std::vector<float>& momentum() const { return momentum_; }

private:
  OuterSettings settings_;
  std::vector<float> start_, momentum_;
};

}  // namespace marian
