#include "training/graph_groups/in_place_shards.h"

#include <algorithm>
#include <cmath>

#include "common/parallel.h"
#include "common/timeline.h"
#include "optimizers/gradient_clipping.h"
#include "tensors/kernels.h"

namespace marian {

InPlaceShards::InPlaceShards(std::vector<Parameters*> params,
                             const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, float emaAlpha)
    : NodeShards(std::move(params), makeOptimizer, emaAlpha, /*inPlace=*/true,
                 [this](size_t k) { return params_[k]->device(); }) {}

Tensor InPlaceShards::shard(size_t d, size_t k, bool grads) const {
  Tensor all = grads ? params_[d]->grads() : params_[d]->values();
  return all.slice(shards_[k]->range().offset, shards_[k]->range().size);
}

Tensor InPlaceShards::gradPart(size_t d, size_t k, Range range) const {
  Range r = shards_[k]->range();
  size_t begin = std::max(r.offset, range.offset), end = std::max(begin, std::min(r.end(), range.end()));
  return params_[d]->grads().slice(begin, end - begin);
}

void InPlaceShards::sumDevicesInto(size_t k, Range range, const std::vector<char>& active) {
  Tensor mine = gradPart(k, k, range);
  if(mine.size() == 0)
    return;
  for(size_t d = 0; d < params_.size(); ++d)
    if(d != k && active[d])
      kernels::add(mine, gradPart(d, k, range));
}

void InPlaceShards::sumDevicesInto(size_t k, const GradientBucket& bucket, const std::vector<char>& active) {
  for(const Range& range : bucket)
    sumDevicesInto(k, range, active);
}

void InPlaceShards::addToGradients(const std::vector<float>& values) {
  for(size_t k = 0; k < shards_.size(); ++k) {
    Range r = shards_[k]->range();
    FlatBuffer host(cpuDevice(), Type::float32, std::max<size_t>(r.size, 1));
    kernels::fromHost(host.all().slice(0, r.size), rangeOf(values, r));
    kernels::add(shard(k, k, true), host.all().slice(0, r.size));
  }
}

bool InPlaceShards::step(float lr, float clipNorm, uint64_t update, float unscale, bool skipNotFinite) {
  size_t n = shards_.size();
  std::vector<double> squares(n);
  parallelFor(n, [&](size_t k) { squares[k] = kernels::squaredNorm(shard(k, k, true)); });
  double squaredNorm = 0;
  for(double s : squares)
    squaredNorm += s;
  squaredNorm *= double(unscale) * double(unscale);
  lastNorm_ = std::sqrt(squaredNorm);
  if(skipNotFinite && !std::isfinite(squaredNorm))
    return false;
  float factor = float(double(clipFactor(squaredNorm, clipNorm, update)) * double(unscale));
  parallelFor(n, [&](size_t k) {  // optimizer and moving average on the owned shard
    timeline::Span span("update", "update");
    Tensor grads = shard(k, k, true);
    if(factor != 1.f)
      kernels::scale(grads, factor);
    shards_[k]->update(grads, lr);
  });
  return true;
}

void InPlaceShards::allGather() {
  size_t n = shards_.size();
  if(n > 1)
    parallelFor(n, [&](size_t d) {
      timeline::Span span("all-gather", "sync");
      for(size_t k = 0; k < n; ++k)
        if(k != d)
          kernels::copy(shard(d, k, false), shard(k, k, false));
    });
}

}  // namespace marian
