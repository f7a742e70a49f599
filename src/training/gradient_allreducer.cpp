#include "training/gradient_allreducer.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

void validateAllreduceOptions(const Options& o) {
  std::string name = o.get<std::string>("sparse-allreduce");
  auto names = allreduceNames();
  if(std::find(names.begin(), names.end(), name) == names.end()) {
    std::string known;
    for(const std::string& n : names)
      known += (known.empty() ? "" : ", ") + n;
    ABORT("--sparse-allreduce '{}' is unknown; available: {}", name, known);
  }
  float density = o.get<float>("compression-density");
  ABORT_IF(!(density > 0.f && density <= 1.f), "--compression-density must be in (0, 1], not {}", density);
  parseTopkMethod(o.get<std::string>("topk-selection"));
  ABORT_IF(o.get<int>("topk-reuse-every") < 1, "--topk-reuse-every must be >= 1");
  ABORT_IF(o.get<int>("oktopk-repartition-every") < 1, "--oktopk-repartition-every must be >= 1");
}

GradientAllreducer::GradientAllreducer(const Options& o, MpiTransport& transport, size_t n, uint64_t seed)
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

void GradientAllreducer::reduce(std::vector<float>& grads) {
  size_t n = grads.size();
  if(density_ >= 1.0) {
    algorithm_->sumDense(grads);
    return;
  }
  if(!selector_)
    selector_ = std::make_unique<TopkSelector>(n, method_, seed_, reuseEvery_);
  size_t k = keptOf(n);
  SparseVector sent = selector_->select(grads.data(), k);
  AllreduceResult result = algorithm_->sum(sent, n, k);
  if(result.isSelection)
    selector_->restoreUnselected(sent, result.sparse);
  std::fill(grads.begin(), grads.end(), 0.f);
  result.addTo(grads.data());
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
  if(density_ >= 1.0) {  // dense: the whole gradient goes through the host anyway
    std::vector<float> all(n);
    for(size_t s = 0; s < shards.size(); ++s)
      kernels::copy(Tensor(all.data() + offsets[s], shards[s].shape, Type::float32, cpuDevice()), shards[s]);
    algorithm_->sumDense(all);
    for(size_t s = 0; s < shards.size(); ++s)
      kernels::copy(shards[s], Tensor(all.data() + offsets[s], shards[s].shape, Type::float32, cpuDevice()));
    return;
  }
  if(onDevices_.empty())
    for(size_t s = 0; s < shards.size(); ++s)
      onDevices_.push_back(std::make_unique<TopkSelector>(shards[s].size(), method_, seed_ + 104729 * s,
                                                          reuseEvery_, shards[s].device));
  SparseVector sent;
  std::vector<SparseVector> parts(shards.size());
  for(size_t s = 0; s < shards.size(); ++s) {
    parts[s] = onDevices_[s]->select(shards[s], keptOf(shards[s].size()));
    for(size_t e = 0; e < parts[s].size(); ++e) {
      sent.indices.push_back(uint32_t(offsets[s] + parts[s].indices[e]));
      sent.values.push_back(parts[s].values[e]);
    }
  }
  AllreduceResult result = algorithm_->sum(sent, n, keptOf(n));
  for(size_t s = 0; s < shards.size(); ++s) {
    if(result.isSelection)
      onDevices_[s]->restoreUnselected(parts[s], range(result.sparse, offsets[s], shards[s].size()));
    if(result.isDense) {
      std::vector<float> part(result.dense.begin() + long(offsets[s]),
                              result.dense.begin() + long(offsets[s] + shards[s].size()));
      kernels::fromHost(shards[s], part);
    } else {
      SparseVector mine = range(result.sparse, offsets[s], shards[s].size());
      kernels::fill(shards[s], 0.f);
      kernels::scatterAdd(shards[s], mine.indices, mine.values);
    }
  }
}

}  // namespace marian
