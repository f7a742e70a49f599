#include "translator/output_sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/format.h"
#include "common/splitmix.h"
#include "tensors/counter_hash.h"

namespace marian {

namespace {
constexpr float kPruned = -std::numeric_limits<float>::infinity();

// log-softmax of a row in place (pruned words stay -inf; a row of nothing but -inf stays so)
void renormalize(float* x, size_t n) {
  float top = *std::max_element(x, x + n);
  if(!std::isfinite(top))
    return;
  double sum = 0;
  for(size_t i = 0; i < n; ++i)
    sum += std::exp(double(x[i] - top));
  float logSum = top + float(std::log(sum));
  for(size_t i = 0; i < n; ++i)
    x[i] -= logSum;
}

float number(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    float v = std::stof(text, &used);
    if(used == text.size() && std::isfinite(v))
      return v;
  } catch(const std::exception&) {
  }
  ABORT("--output-sampling: {} '{}' is not a number", what, text);
}
}  // namespace

float gumbelOf(uint32_t hash) {
  double u = (double(hash) + 0.5) / 4294967296.0;  // in (0, 1)
  return float(-std::log(-std::log(u)));
}

OutputSampling::OutputSampling(const std::vector<std::string>& values) {
  if(values.empty() || values[0] == "0")
    return;
  std::string method = values[0] == "1" ? "full" : values[0];
  ABORT_IF(values.size() > 3 || (method == "full" && values.size() > 2),
           "--output-sampling {}: too many values (full [T], topk [K [T]], nucleus [P [T]], epsilon [E [T]])",
           method);
  size_t temperatureAt = 2;
  if(method == "full") {
    method_ = Method::full;
    temperatureAt = 1;
  } else if(method == "topk") {
    method_ = Method::topk;
    param_ = values.size() > 1 ? number(values[1], "K") : 10.f;
    ABORT_IF(param_ < 1 || param_ != std::floor(param_), "--output-sampling topk {}: K is a whole number >= 1", param_);
  } else if(method == "nucleus") {
    method_ = Method::nucleus;
    param_ = values.size() > 1 ? number(values[1], "P") : 0.9f;
    ABORT_IF(!(param_ > 0 && param_ <= 1), "--output-sampling nucleus {}: P is a probability mass in (0, 1]", param_);
  } else if(method == "epsilon") {
    method_ = Method::epsilon;
    param_ = values.size() > 1 ? number(values[1], "E") : 0.02f;
    ABORT_IF(!(param_ > 0 && param_ <= 1), "--output-sampling epsilon {}: E is a probability in (0, 1]", param_);
  } else {
    ABORT("Unknown --output-sampling method '{}': full, topk, nucleus or epsilon", values[0]);
  }
  if(values.size() > temperatureAt)
    temperature_ = number(values[temperatureAt], "the temperature");
  ABORT_IF(!(temperature_ > 0), "--output-sampling: the temperature must be > 0, not {}", temperature_);
}

uint64_t OutputSampling::batchKey(uint64_t seed, uint64_t batch) { return splitmix(splitmix(seed) + batch); }

uint64_t OutputSampling::stepKey(uint64_t batchKey, int step) { return splitmix(batchKey + uint64_t(step)); }

std::string OutputSampling::describe() const {
  switch(method_) {
    case Method::full: return format("from the full distribution with temperature {}", temperature_);
    case Method::topk: return format("from the top {} with temperature {}", int(param_), temperature_);
    case Method::nucleus: return format("from the nucleus of mass {} with temperature {}", param_, temperature_);
    case Method::epsilon: return format("from the words of probability at least {} with temperature {}", param_, temperature_);
    default: return "off";
  }
}

void OutputSampling::apply(float* x, size_t n, uint64_t stepKey, size_t row, int forbidden) const {
  renormalize(x, n);  // a distribution to prune (an ensemble's weighted sum is none), as Marian's
  if(forbidden >= 0 && size_t(forbidden) < n)
    x[forbidden] = kPruned;
  if(method_ == Method::topk && size_t(param_) < n) {
    std::vector<float> sorted(x, x + n);
    std::nth_element(sorted.begin(), sorted.begin() + long(param_) - 1, sorted.end(), std::greater<float>());
    float kth = sorted[size_t(param_) - 1];
    size_t kept = 0;  // ties at the k-th value: the first ones, so that k words stay
    for(size_t i = 0; i < n; ++i)
      if(x[i] > kth)
        ++kept;
    for(size_t i = 0; i < n; ++i)
      if(x[i] < kth || (x[i] == kth && kept++ >= size_t(param_)))
        x[i] = kPruned;
  } else if(method_ == Method::nucleus && param_ < 1.f) {
    // the words by probability, kept while the mass before them is at most P (Marian's exclusive
    // cumulative sum): the most probable always. Only a prefix is sorted, grown until the mass
    // passes P (a few hundred of a vocabulary's words, where a whole sort cost more than the step)
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto first = [&](size_t a, size_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
    size_t kept = n;
    for(size_t m = std::min<size_t>(n, 64);; m = std::min(n, m * 4)) {
      std::partial_sort(order.begin(), order.begin() + long(m), order.end(), first);
      double before = 0;
      size_t i = 0;
      while(i < m && before <= double(param_))
        before += std::exp(double(x[order[i++]]));
      if(before > double(param_) || m == n) {  // the words after the i-th have more mass before them
        kept = i;
        break;
      }
    }
    for(size_t j = kept; j < n; ++j)
      x[order[j]] = kPruned;
  } else if(method_ == Method::epsilon) {
    float top = *std::max_element(x, x + n);
    float threshold = std::min(top, std::log(param_));  // the best word at least
    for(size_t i = 0; i < n; ++i)
      if(x[i] < threshold)
        x[i] = kPruned;
  }
  renormalize(x, n);  // after pruning (a full row is one already, but for <unk>)
  uint32_t base = hashBase(splitmix(stepKey + row));
  for(size_t i = 0; i < n; ++i)
    if(x[i] != kPruned)
      x[i] = x[i] / temperature_ + gumbelOf(counterHash(base, i));
  renormalize(x, n);
}

}  // namespace marian
