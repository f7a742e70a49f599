#include "comm/dropper.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

GradientDropper::GradientDropper(size_t size, uint64_t seed, Device device)
    : device_(device), rng_(seed), seed_(seed) {
  if(device.type == DeviceType::cpu)
    residual_.assign(size, 0.f);
  size_ = size;  // a GPU residual is allocated by the first drop: no memory when nothing drops
}

SparseVector GradientDropper::drop(const float* grads, size_t offset, size_t n, double keep) {
  ABORT_IF(device_.type != DeviceType::cpu, "GradientDropper on {} was given host gradients", device_.toString());
  ABORT_IF(offset + n > residual_.size(), "Dropping [{}, {}) of a range of {}", offset, offset + n,
           residual_.size());
  float* r = residual_.data() + offset;
  for(size_t i = 0; i < n; ++i)
    r[i] += grads[i];
  float t = sampledThreshold(r, n, keep, rng_);
  SparseVector sent = selectAbove(r, n, t);
  for(uint32_t i : sent.indices)
    r[i] = 0.f;
  return sent;
}

SparseVector GradientDropper::drop(Tensor grads, size_t offset, double keep) {
  if(device_.type == DeviceType::cpu) {  // host memory: the vectorised host path
    ABORT_IF(grads.device.type != DeviceType::cpu, "GradientDropper on the host was given {} gradients",
             grads.device.toString());
    return drop(grads.f32(), offset, grads.size(), keep);
  }
  if(!onDevice_)
    onDevice_ = std::make_unique<FlatBuffer>(device_, Type::float32, std::max<size_t>(size_, 1));
  ABORT_IF(offset + grads.size() > onDevice_->size(), "Dropping [{}, {}) of a range of {}", offset,
           offset + grads.size(), onDevice_->size());
  Tensor r = onDevice_->all().slice(offset, grads.size());
  kernels::add(r, grads);
  float t = kernels::sampledThreshold(r, keep, seed_ * 1000003ull + calls_++);
  SparseVector sent;
  kernels::takeAbove(r, t, sent.indices, sent.values);
  return sent;
}

std::vector<float> GradientDropper::residual() const {
  if(device_.type == DeviceType::cpu)
    return residual_;
  return onDevice_ ? kernels::toHost(onDevice_->all()) : std::vector<float>(size_, 0.f);
}

}  // namespace marian
