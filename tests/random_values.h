#pragma once
// defines: randomValues — n standard-normal floats from a seed, the inputs of several tests.
#include <random>
#include <vector>

inline std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for(float& x : v)
    x = d(rng);
  return v;
}
