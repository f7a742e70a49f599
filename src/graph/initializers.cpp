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

Initializer glorotUniform(bool fanIn, bool fanOut) {
  ABORT_IF(!fanIn && !fanOut, "glorotUniform needs at least one of its fans");
  return [fanIn, fanOut](std::vector<float>& values, const Shape& shape, std::mt19937_64& rng) {
    float out = float(shape.back());
    float in = shape.rank() > 1 ? float(shape[-2]) : out;
    float s = fanIn && fanOut ? std::sqrt(6.f / (in + out)) : std::sqrt(3.f / (fanIn ? in : out));
    std::uniform_real_distribution<float> dist(-s, s);
    for(float& v : values)
      v = dist(rng);
  };
}

Initializer embeddingUniform() { return glorotUniform(/*fanIn=*/false, /*fanOut=*/true); }

}  // namespace inits
}  // namespace marian
