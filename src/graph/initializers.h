#pragma once
// defines: marian::Initializer and marian::inits — how a parameter's first values are drawn.
// They fill host memory from a generator seeded per parameter name, so initial values do not
// depend on the order in which a model creates its parameters or on the device.
#include <functional>
#include <random>
#include <vector>

#include "tensors/shape.h"

namespace marian {

using Initializer = std::function<void(std::vector<float>& values, const Shape& shape, std::mt19937_64& rng)>;

namespace inits {
Initializer zeros();
Initializer ones();
Initializer fromValue(float v);
Initializer fromVector(std::vector<float> values);  // size must match the shape
Initializer uniform(float low = 0.f, float high = 1.f);
Initializer normal(float mean = 0.f, float stddev = 1.f);
// Glorot's uniform U(-s, s) with Marian's fan modes, the fans from the last two axes [fanIn, fanOut]:
// both: s = sqrt(6 / (fanIn + fanOut)); fanIn only: sqrt(3 / fanIn); fanOut only: sqrt(3 / fanOut).
Initializer glorotUniform(bool fanIn = true, bool fanOut = true);
// Marian's rule for a table of vectors [rows, dim] (embeddings, an untied output matrix): fanOut
// only, so each row has roughly unit length once scaled by sqrt(dim), whatever the vocabulary size.
Initializer embeddingUniform();
}  // namespace inits

}  // namespace marian
