#pragma once
// defines: marian::splitmix — splitmix64's finaliser: a 64-bit key mixed so that keys one apart
// share nothing (the seeds of streamed windows, of sampled batches, steps and rows).
#include <cstdint>

namespace marian {

inline uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace marian
