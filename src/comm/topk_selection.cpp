#include "comm/topk_selection.h"

#include <algorithm>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

TopkMethod parseTopkMethod(const std::string& name) {
  if(name == "exact")
    return TopkMethod::exact;
  if(name == "sampled")
    return TopkMethod::sampled;
  if(name == "reuse")
    return TopkMethod::reuse;
  ABORT("Unknown top-k selection '{}'; available: exact, sampled, reuse", name);
}

TopkSelector::TopkSelector(size_t n, TopkMethod method, uint64_t seed, int reuseEvery, Device device, float momentum)
    : n_(n), device_(device), residual_(std::make_unique<FlatBuffer>(device, Type::float32, std::max<size_t>(n, 1))),
      momentum_(momentum), seed_(seed), method_(method), reuseEvery_(reuseEvery) {
  ABORT_IF(reuseEvery < 1, "Threshold reuse needs a period >= 1, not {}", reuseEvery);
  ABORT_IF(!(momentum >= 0.f && momentum < 1.f), "Momentum correction needs a momentum in [0, 1), not {}", momentum);
  if(momentum_ > 0.f)
    velocity_ = std::make_unique<FlatBuffer>(device, Type::float32, std::max<size_t>(n, 1));
}

SparseVector TopkSelector::select(Tensor x, size_t k) {
  ABORT_IF(x.size() != n_, "TopkSelector of {} values was given {}", n_, x.size());
  SparseVector sent;
  if(n_ == 0)
    return sent;
  Tensor r = residual_->all().slice(0, n_);
  if(velocity_) {  // u = m u + x; the residual accumulates u
    Tensor u = velocity_->all().slice(0, n_);
    kernels::scale(u, momentum_);
    kernels::add(u, x);  // also across devices
    kernels::add(r, u);
  } else {
    kernels::add(r, x);  // also across devices
  }
  if(method_ == TopkMethod::sampled)
    threshold_ = kernels::sampledThreshold(r, double(k) / double(n_), seed_ * 1000003ull + calls_);
  else if(method_ == TopkMethod::exact || calls_ % uint64_t(reuseEvery_) == 0)
    threshold_ = kernels::exactThreshold(r, k);
  ++calls_;
  kernels::takeAbove(r, threshold_, sent.indices, sent.values);
  if(velocity_) {  // momentum factor masking: what was sent stops gathering momentum
    Tensor u = velocity_->all().slice(0, n_);
    std::vector<float> v;
    kernels::gatherAt(v, u, sent.indices);
    for(float& e : v)
      e = -e;
    kernels::scatterAdd(u, sent.indices, v);
  }
  return sent;
}

void TopkSelector::restoreUnselected(const SparseVector& sent, const SparseVector& kept) {
  SparseVector back;
  size_t j = 0;
  for(size_t s = 0; s < sent.size(); ++s) {
    while(j < kept.size() && kept.indices[j] < sent.indices[s])
      ++j;
    if(j == kept.size() || kept.indices[j] != sent.indices[s]) {
      back.indices.push_back(sent.indices[s]);
      back.values.push_back(sent.values[s]);
    }
  }
  kernels::scatterAdd(residual_->all(), back.indices, back.values);
}

TopkSelector::State TopkSelector::state() const {
  State s;
  s.residual = n_ ? kernels::toHost(residual_->all().slice(0, n_)) : std::vector<float>();
  if(velocity_ && n_)
    s.velocity = kernels::toHost(velocity_->all().slice(0, n_));
  s.calls = calls_;
  s.threshold = threshold_;
  return s;
}

void TopkSelector::setState(const State& s) {
  ABORT_IF(s.residual.size() != n_, "A residual of {} values for a selector of {}", s.residual.size(), n_);
  if(n_)
    kernels::fromHost(residual_->all().slice(0, n_), s.residual);
  if(velocity_ && n_) {  // a state saved without momentum starts the velocity at zero
    ABORT_IF(!s.velocity.empty() && s.velocity.size() != n_, "A velocity of {} values for a selector of {}",
             s.velocity.size(), n_);
    kernels::fromHost(velocity_->all().slice(0, n_), s.velocity.empty() ? std::vector<float>(n_, 0.f) : s.velocity);
  }
  calls_ = s.calls;
  threshold_ = s.threshold;
}

}  // namespace marian
