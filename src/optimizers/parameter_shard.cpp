#include "optimizers/parameter_shard.h"

#include <algorithm>

#include "common/error.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

ParameterShard::ParameterShard(Range range, Device device, Tensor storage, bool inPlace,
                               std::unique_ptr<Optimizer> optimizer, float emaAlpha)
    : range_(range), device_(device), optimizer_(std::move(optimizer)), emaAlpha_(emaAlpha) {
  ABORT_IF(storage.size() != range.size, "Shard of {} values given storage of {}", range.size, storage.size());
  if(inPlace) {
    values_ = storage;
  } else {
    own_ = std::make_unique<FlatBuffer>(device, Type::float32, std::max<size_t>(range.size, 1));
    values_ = own_->all().slice(0, range.size);
    kernels::copy(values_, storage);
  }
  if(emaAlpha_ > 0.f) {
    ema_ = std::make_unique<FlatBuffer>(device, Type::float32, std::max<size_t>(range.size, 1));
    kernels::copy(smoothed().slice(0, range.size), values_);
  }
}

std::vector<float> ParameterShard::toHost(bool smoothedValues) const {
  return kernels::toHost((smoothedValues ? smoothed() : values()).slice(0, range_.size));
}

void ParameterShard::update(Tensor grads, float lr) {
  if(range_.size == 0)
    return;
  uint64_t before = optimizer_->steps();
  optimizer_->update(values_, grads, lr);
  if(ema_) {  // Marian's ExponentialSmoothing::updateAvgParams (its float arithmetic)
    float decay = std::max(1.f - float(1. - double(emaAlpha_)), 1.f - float(before + 1) / float(before + 10));
    kernels::emaStep(ema_->all().slice(0, range_.size), values_, decay);
  }
}

std::vector<Tensor> ParameterShard::replicaTensors(bool moments) {
  if(range_.size == 0)
    return {};
  std::vector<Tensor> all{values_};
  if(ema_)
    all.push_back(smoothed().slice(0, range_.size));
  if(moments)
    for(Tensor t : optimizer_->stateTensors())
      all.push_back(t);
  return all;
}

void ParameterShard::saveTo(ModelState& state) const {
  ABORT_IF(range_.end() > state.n, "Shard [{}, {}) outside a model of {}", range_.offset, range_.end(), state.n);
  // straight into the model's arrays: a copy of each shard's on the way would add the model's size
  // again to a save's memory
  auto put = [&](std::vector<float>& global, Tensor part) {
    ABORT_IF(part.size() != range_.size, "Shard [{}, {}) saving an array of {} values", range_.offset, range_.end(),
             part.size());
    if(global.size() != state.n)
      global.assign(state.n, 0.f);
    backendFor(part.device).copyToHost(global.data() + range_.offset, part.f32(), part.bytes());
  };
  state.optimizerSteps.push_back({range_, optimizer_->steps()});
  if(optimizer_->statisticsFrom())  // every shard resets at the same update
    state.counters[ModelState::kOptimizerStatisticsFrom] = optimizer_->statisticsFrom();
  if(range_.size == 0)
    return;
  put(state.values, values_);
  if(ema_)
    put(state.smoothed, smoothed().slice(0, range_.size));
  for(const std::string& name : optimizer_->stateNames())
    put(state.optimizer[name], optimizer_->stateTensor(name));
}

void ParameterShard::restoreFrom(const ModelState& state) {
  ABORT_IF(range_.end() > state.n, "A saved model of {} parameters has no range [{}, {})", state.n, range_.offset,
           range_.end());
  auto part = [&](const std::vector<float>& global) { return rangeOf(global, range_); };
  OptimizerState s;
  s.steps = state.stepsAt(range_.offset);
  // (one count for every shard: those of an asynchronous run's checkpoint can be a few steps apart)
  auto from = state.counters.find(ModelState::kOptimizerStatisticsFrom);
  s.statisticsFrom = from == state.counters.end() ? 0 : std::min(from->second, s.steps);
  for(const auto& [name, values] : state.optimizer)
    s.arrays[name] = part(values);
  optimizer_->setState(s, device_);
  if(range_.size == 0)
    return;
  kernels::fromHost(values_, part(state.values));
  if(ema_)
    kernels::fromHost(smoothed().slice(0, range_.size), part(state.smoothed.empty() ? state.values : state.smoothed));
}


void ParameterShard::readOptimizerArray(const std::string& name, Range range, float* out) const {
  size_t begin = std::max(range_.offset, range.offset), end = std::min(range_.end(), range.end());
  if(begin >= end)
    return;
  float* into = out + (begin - range.offset);
  Tensor state = optimizer_->stateTensor(name);
  if(state.empty()) {
    std::fill(into, into + (end - begin), 0.f);
    return;
  }
  kernels::copy(Tensor(into, Shape({int(end - begin)}), Type::float32, cpuDevice()),
                state.slice(begin - range_.offset, end - begin));
}

}  // namespace marian
