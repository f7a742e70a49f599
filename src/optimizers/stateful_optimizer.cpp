#include "optimizers/optimizer.h"

#include <algorithm>

#include "common/options.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

void StatefulOptimizer::ensureBuffers(Tensor params) {
  if(buffers_.empty())
    for(size_t i = 0; i < names_.size(); ++i)
      buffers_.push_back(std::make_unique<FlatBuffer>(params.device, Type::float32, params.size()));
  ABORT_IF(buffers_[0]->size() != params.size(), "{} state holds {} values but the range has {}",
           name(), buffers_[0]->size(), params.size());
}

OptimizerState Optimizer::state() const {
  OptimizerState s;
  s.steps = steps();
  s.statisticsFrom = statisticsFrom();
  for(const std::string& name : stateNames())
    s.arrays[name] = kernels::toHost(stateTensor(name));
  return s;
}

std::vector<std::string> StatefulOptimizer::stateNames() const {
  return std::vector<std::string>(names_.begin(), names_.begin() + std::min(names_.size(), buffers_.size()));
}

std::vector<Tensor> StatefulOptimizer::stateTensors() {
  std::vector<Tensor> all;
  for(auto& b : buffers_)
    all.push_back(b->all());
  return all;
}

Tensor StatefulOptimizer::stateTensor(const std::string& name) const {
  for(size_t i = 0; i < buffers_.size(); ++i)
    if(names_[i] == name)
      return buffers_[i]->all();
  return {};
}

void StatefulOptimizer::setState(const OptimizerState& state, Device device) {
  buffers_.clear();
  Optimizer::setState(state, device);
  if(state.arrays.empty() && state.steps == state.statisticsFrom)
    return;  // no step since the start or the last reset: the first update creates the buffers
  for(const std::string& n : names_) {
    auto it = state.arrays.find(n);
    ABORT_IF(it == state.arrays.end(), "Optimizer state for {} lacks '{}'", name(), n);
    buffers_.push_back(std::make_unique<FlatBuffer>(device, Type::float32, it->second.size()));
    kernels::fromHost(buffers_.back()->all(), it->second);
  }
}

void StatefulOptimizer::resetStatistics() {
  Optimizer::resetStatistics();
  for(auto& b : buffers_)
    backendFor(b->device()).zero(b->all().data, b->all().bytes());
}

void Adam::update(Tensor params, Tensor grads, float lr) {
  ensureBuffers(params);
  ++t_;
  uint64_t t = t_ - statisticsFrom_;  // the steps since the moments were last zero
  kernels::adamStep(params, grads, buffer(0), buffer(1), lr, beta1_, beta2_, eps_, t, variance_.updatesUpTo(t),
                    variance_.updatesAt(t), meanOver_, weightDecay_);
}

void Adagrad::update(Tensor params, Tensor grads, float lr) {
  ensureBuffers(params);
  ++t_;
  kernels::adagradStep(params, grads, buffer(0), lr, eps_);
}

float adamBeta1(const Options& options) {
  std::vector<float> p = options.get<std::vector<float>>("optimizer-params");
  return p.empty() ? Adam::kDefaultBeta1 : p[0];
}

std::unique_ptr<Optimizer> createOptimizer(const std::string& name, const std::vector<float>& p,
                                           AdamVarianceSchedule variance) {
  if(name == "sgd")
    return std::make_unique<Sgd>();
  // epsilon 0 divides 0 by 0 where every gradient so far was 0 (a word not yet seen); beta 1
  // divides by 0 in the bias correction: both put NaNs in the parameters
  auto positive = [&](float eps) {
    ABORT_IF(!(eps > 0.f), "--optimizer-params: {}'s epsilon must be above 0, not {}", name, eps);
    return eps;
  };
  auto decay = [&](float beta, const char* which) {
    ABORT_IF(!(beta >= 0.f && beta < 1.f), "--optimizer-params: {}'s {} must be in [0, 1), not {}", name, which, beta);
    return beta;
  };
  if(name == "adagrad")
    return std::make_unique<Adagrad>(positive(p.size() > 0 ? p[0] : 1e-8f));
  if(name == "adam") {
    // Marian's: beta1, beta2, epsilon and the decoupled weight decay w
    ABORT_IF(p.size() > 4, "--optimizer-params: adam takes at most 4 values (beta1, beta2, epsilon, weight decay), "
                           "got {}", p.size());
    float w = p.size() > 3 ? p[3] : 0.f;
    ABORT_IF(!(w >= 0.f), "--optimizer-params: adam's weight decay must be 0 or more, not {}", w);
    return std::make_unique<Adam>(decay(p.size() > 0 ? p[0] : Adam::kDefaultBeta1, "beta1"),
                                  decay(p.size() > 1 ? p[1] : Adam::kDefaultBeta2, "beta2"),
                                  positive(p.size() > 2 ? p[2] : Adam::kDefaultEpsilon), variance, w);
  }
  ABORT("Unknown --optimizer '{}': use sgd, adagrad or adam", name);
}

std::unique_ptr<Optimizer> createOptimizer(const Options& options, size_t ranks) {
  std::string name = options.get<std::string>("optimizer");
  AdamVarianceSchedule variance = AdamVarianceSchedule::fromOptions(options);
  ABORT_IF(variance.skipsSteps() && name != "adam", "{} needs --optimizer adam, not {}",
           variance.freezeAfter > 0 ? "--adam-freeze-variance-after" : "--adam-variance-update-scaler", name);
  bool varianceOfMean = options.get<std::string>("local-adam-variance") == "mean";
  ABORT_IF(varianceOfMean && name != "adam", "--local-adam-variance mean needs --optimizer adam, not {}", name);
  ABORT_IF(varianceOfMean && options.get<int>("local-steps") == 0,
           "--local-adam-variance mean sets the inner Adam of --local-steps, which is off");
  std::unique_ptr<Optimizer> optimizer =
      createOptimizer(name, options.get<std::vector<float>>("optimizer-params"), variance);
  if(varianceOfMean)
    static_cast<Adam&>(*optimizer).estimateVarianceOfMeanOver(ranks);
  return optimizer;
}

}  // namespace marian
