#include "common/content_hash.h"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "common/error.h"
#include "common/format.h"

namespace marian {

void ContentHash::add(const char* data, size_t n) {
  crc = uint32_t(crc32_z(crc, reinterpret_cast<const Bytef*>(data), n));
  bytes += n;
}

std::string ContentHash::str() const {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", unsigned(crc));
  return format("{} bytes, CRC-32 {}", grouped(bytes), hex);
}

ContentHash hashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ABORT_IF(!in, "Cannot read '{}' to hash its content", path);
  ContentHash h;
  std::vector<char> buf(1 << 20);
  while(in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    h.add(buf.data(), size_t(in.gcount()));
  ABORT_IF(in.bad(), "Cannot read '{}' to hash its content", path);
  return h;
}

}  // namespace marian
