#include "optimizers/adam_moments.h"

#include <algorithm>
#include <cmath>

#include "optimizers/gradient_clipping.h"
#include "optimizers/optimizer.h"
#include "optimizers/parameter_shard.h"

namespace marian {

AdamMoments AdamMoments::of(const std::vector<std::unique_ptr<ParameterShard>>& shards, float beta1) {
  auto reader = [&shards](const char* name) {
    return [&shards, name](Range range, float* out) {
      for(const auto& s : shards)
        s->readOptimizerArray(name, range, out);
    };
  };
  return AdamMoments(reader(Adam::kFirstMoment), reader(Adam::kSecondMoment), beta1);
}

void AdamMoments::read(const Reader& reader, const std::vector<Range>& ranges, float* out) const {
  size_t at = 0;
  for(const Range& range : ranges) {
    reader(range, out + at);
    at += range.size;
  }
}

void AdamMoments::toCandidate(const std::vector<Range>& ranges, std::vector<float>& values, int ranks, size_t n,
                              float clipNorm, uint64_t update, std::vector<float>& m) const {
  m.resize(values.size());
  read(first_, ranges, m.data());
  // the rank's own gradient: the sum's share as if this rank's were the update's
  float own = float(ranks);
  if(clipNorm > 0.f) {  // --clip-norm on the rank's own gradient, the bucket's share of the threshold
    double squares = 0;
    for(float x : values)
      squares += double(own * x) * double(own * x);
    if(std::isfinite(squares))  // a diverged gradient goes on to the sum, whose step names the update on every rank
      own *= clipFactor(squares, double(clipNorm) * std::sqrt(double(values.size()) / double(n)), update);
  }
  for(size_t i = 0; i < values.size(); ++i)
    values[i] = beta1_ * m[i] + (1.f - beta1_) * own * values[i];
}

void AdamMoments::toGradient(std::vector<float>& momentum, const std::vector<float>& m) const {
  for(size_t i = 0; i < momentum.size(); ++i)
    momentum[i] = (momentum[i] - beta1_ * m[i]) / (1.f - beta1_);
}

std::vector<float> AdamMoments::updateDirectionUnits(const std::vector<Range>& ranges,
                                                     const std::vector<size_t>& starts) const {
  constexpr double kFloorOfMean = 0.01;  // a value whose variance froze at 0 must not set its parameter's scale
  size_t size = 0;
  for(const Range& r : ranges)
    size += r.size;
  std::vector<float> units(size);
  read(second_, ranges, units.data());
  for(size_t p = 0; p < starts.size(); ++p) {
    size_t begin = starts[p], end = p + 1 < starts.size() ? starts[p + 1] : units.size();
    double sum = 0;
    for(size_t i = begin; i < end; ++i)
      sum += std::sqrt(double(std::max(units[i], 0.f)));
    double floor = end > begin ? kFloorOfMean * sum / double(end - begin) : 0.0;
    for(size_t i = begin; i < end; ++i)
      units[i] = floor > 0 ? float(std::max(std::sqrt(double(std::max(units[i], 0.f))), floor)) : 1.f;
  }
  return units;
}

}  // namespace marian
