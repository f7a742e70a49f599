#pragma once
// defines: marian::ContentHash — the bytes of a text counted and their CRC-32 (zlib's) computed
// as they stream by: what a checkpoint records of the corpus and the vocabularies it was trained
// on, so that a resume on other ones is named instead of going on silently.
#include <cstddef>
#include <cstdint>
#include <string>

namespace marian {

struct ContentHash {
  uint64_t bytes = 0;
  uint32_t crc = 0;

  void add(const char* data, size_t n);
  std::string str() const;  // "1,834,535 bytes, CRC-32 1a2b3c4d"
};

// The whole file's (an error naming it when it cannot be read).
ContentHash hashFile(const std::string& path);

}  // namespace marian
