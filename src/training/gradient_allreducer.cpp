#include "training/gradient_allreducer.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

void validateAllreduceOptions(const Options& o) {
  std::string name = o.get<std::string>("sparse-allreduce");
  ABORT_IF(!findAllreduce(name), "--sparse-allreduce '{}' is unknown; available:{}", name,
           describeAllreduceAlgorithms());
  float density = o.get<float>("compression-density");
  ABORT_IF(!(density > 0.f && density <= 1.f), "--compression-density must be in (0, 1], not {}", density);
  parseTopkMethod(o.get<std::string>("topk-selection"));
  ABORT_IF(o.get<int>("topk-reuse-every") < 1, "--topk-reuse-every must be >= 1");
  ABORT_IF(o.get<int>("oktopk-repartition-every") < 1, "--oktopk-repartition-every must be >= 1");
}

GradientAllreducer::GradientAllreducer(const Options& o, Transport& transport, size_t n, uint64_t seed)
    : n_(n), density_(o.get<float>("compression-density")) {
  validateAllreduceOptions(o);
  AllreduceSettings settings;
  settings.repartitionEvery = o.get<int>("oktopk-repartition-every");
  settings.thresholdEvery = o.get<int>("topk-reuse-every");
  algorithm_ = createAllreduce(o.get<std::string>("sparse-allreduce"), transport, settings);
  method_ = parseTopkMethod(o.get<std::string>("topk-selection"));
  reuseEvery_ = o.get<int>("topk-reuse-every");
  seed_ = seed * 7919 + uint64_t(transport.rank());
}

size_t GradientAllreducer::keptOf(size_t n) const {
  return std::max<size_t>(1, size_t(std::llround(density_ * double(n))));
}

namespace {
// The entries of `v` in [begin, begin + n), with indices relative to begin.
SparseVector range(const SparseVector& v, size_t begin, size_t n) {
  SparseVector part;
  auto first = std::lower_bound(v.indices.begin(), v.indices.end(), uint32_t(begin));
  for(auto it = first; it != v.indices.end() && *it < begin + n; ++it) {
    part.indices.push_back(uint32_t(*it - begin));
    part.values.push_back(v.values[size_t(it - v.indices.begin())]);
  }
  return part;
}
}  // namespace

void GradientAllreducer::reduce(const std::vector<Tensor>& shards) {
  std::vector<size_t> offsets;
  size_t n = 0;
  for(const Tensor& t : shards) {
    offsets.push_back(n);
    n += t.size();
  }
  ABORT_IF(n != n_, "GradientAllreducer for {} values was given shards of {}", n_, n);
  auto hostView = [&](size_t s) {
    return Tensor(dense_.data() + offsets[s], shards[s].shape, Type::float32, cpuDevice());
  };
  if(density_ >= 1.0) {  // dense: the whole gradient goes through the host anyway
    dense_.resize(n);
    for(size_t s = 0; s < shards.size(); ++s)
      kernels::copy(hostView(s), shards[s]);
    algorithm_->sumDense(dense_);
    for(size_t s = 0; s < shards.size(); ++s)
      kernels::copy(shards[s], hostView(s));
    return;
  }
  if(selectors_.empty())
    for(size_t s = 0; s < shards.size(); ++s)
      selectors_.push_back(std::make_unique<TopkSelector>(shards[s].size(), method_, seed_ + 104729 * s,
                                                          reuseEvery_, shards[s].device));
  SparseVector sent;
  std::vector<SparseVector> parts(shards.size());
  for(size_t s = 0; s < shards.size(); ++s) {
    parts[s] = selectors_[s]->select(shards[s], keptOf(shards[s].size()));
    for(size_t e = 0; e < parts[s].size(); ++e) {
      sent.indices.push_back(uint32_t(offsets[s] + parts[s].indices[e]));
      sent.values.push_back(parts[s].values[e]);
    }
  }
  AllreduceResult result = algorithm_->reduce(sent, n, keptOf(n));
  for(size_t s = 0; s < shards.size(); ++s) {
    if(result.isDense) {
      kernels::fromHost(shards[s], std::vector<float>(result.dense.begin() + long(offsets[s]),
                                                      result.dense.begin() + long(offsets[s] + shards[s].size())));
      continue;
    }
    SparseVector mine = range(result.sparse, offsets[s], shards[s].size());
    if(result.isSelection)  // what the global selection left out goes back to the residual
      selectors_[s]->restoreUnselected(parts[s], mine);
    kernels::fill(shards[s], 0.f);
    kernels::scatterAdd(shards[s], mine.indices, mine.values);
  }
}

}  // namespace marian
