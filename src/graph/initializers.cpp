#include "graph/initializers.h"

#include <cmath>

#include "common/error.h"

namespace marian {
namespace inits {

Initializer fromValue(float v) {
  return [v](std::vector<float>& values, const Shape&, std::mt19937_64&) {
    std::fill(values.begin(), values.end(), v);
  };
}

Initializer zeros() { return fromValue(0.f); }
Initializer ones() { return fromValue(1.f); }

Initializer fromVector(std::vector<float> source) {
  return [source = std::move(source)](std::vector<float>& values, const Shape& shape,
                                      std::mt19937_64&) {
    ABORT_IF(source.size() != values.size(), "Initial values: {} given for shape {}",
             source.size(), shape.toString());
    values = source;
  };
}

Initializer uniform(float low, float high) {
  return [low, high](std::vector<float>& values, const Shape&, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> dist(low, high);
    for(float& v : values)
      v = dist(rng);
  };
}

Initializer normal(float mean, float stddev) {
  return [mean, stddev](std::vector<float>& values, const Shape&, std::mt19937_64& rng) {
    std::normal_distribution<float> dist(mean, stddev);
    for(float& v : values)
      v = dist(rng);
  };
}

Initializer glorotUniform() {
  return [](std::vector<float>& values, const Shape& shape, std::mt19937_64& rng) {
    float fanOut = float(shape.back());
    float fanIn = shape.rank() > 1 ? float(shape[-2]) : fanOut;
    float s = std::sqrt(6.f / (fanIn + fanOut));
    std::uniform_real_distribution<float> dist(-s, s);
    for(float& v : values)
      v = dist(rng);
  };
}

}  // namespace inits
}  // namespace marian
