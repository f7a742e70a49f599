#include "training/gradient_allreducer.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

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
    : density_(o.get<float>("compression-density")) {
  validateAllreduceOptions(o);
  AllreduceSettings settings;
  settings.repartitionEvery = o.get<int>("oktopk-repartition-every");
  settings.thresholdEvery = o.get<int>("topk-reuse-every");
  algorithm_ = createAllreduce(o.get<std::string>("sparse-allreduce"), transport, settings);
  if(density_ < 1.0)
    selector_ = std::make_unique<TopkSelector>(n, parseTopkMethod(o.get<std::string>("topk-selection")),
                                               seed * 7919 + uint64_t(transport.rank()), o.get<int>("topk-reuse-every"));
}

void GradientAllreducer::reduce(std::vector<float>& grads) {
  size_t n = grads.size();
  if(!selector_) {
    algorithm_->sumDense(grads);
    return;
  }
  size_t k = std::max<size_t>(1, size_t(std::llround(density_ * double(n))));
  SparseVector sent = selector_->select(grads.data(), k);
  AllreduceResult result = algorithm_->sum(sent, n, k);
  if(result.isSelection)
    selector_->restoreUnselected(sent, result.sparse);
  std::fill(grads.begin(), grads.end(), 0.f);
  result.addTo(grads.data());
}

}  // namespace marian
