#pragma once
// defines: marian::MomentumSource — where 1-bit Adam's allreducer reads Adam's moments (global
// ranges into host memory) and Adam's beta1. NodeShards::adamMoments() gives the readers of a
// node's shards.
#include <functional>

#include "common/equal_split.h"

namespace marian {

struct MomentumSource {
  std::function<void(Range, float*)> read;          // Adam's m
  std::function<void(Range, float*)> readVariance;  // Adam's v (--onebit-update-direction)
  float beta1 = 0.9f;
};

}  // namespace marian
