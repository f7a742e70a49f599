#pragma once
// defines: marian::Fnv64 — 64-bit FNV-1a (its offset basis and prime) over bytes, or over whole
// 64-bit words mixed in at once (not byte by byte): fingerprints this program compares between
// ranks and runs (a checkpoint's parameter layout, the ranks' gradient buckets).
#include <cstdint>
#include <string>

namespace marian {

struct Fnv64 {
  uint64_t value = 1469598103934665603ull;

  void add(uint64_t word) { value = (value ^ word) * 1099511628211ull; }
  void add(const std::string& bytes) {
    for(unsigned char c : bytes)
      add(uint64_t(c));
  }
};

}  // namespace marian
