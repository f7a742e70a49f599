#pragma once
// Zip files written byte by byte, as numpy.savez(_compressed) writes an .npz, with the fields a
// hostile file lies about given explicitly. Shared by make_seeds.cpp (the npz seeds) and
// tests/test_hostile_npz.cpp.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/npy.h"

namespace marian::fuzz {

using npy::put16;
using npy::put32;
inline void put64(std::string& out, uint64_t v) {
  put32(out, uint32_t(v));
  put32(out, uint32_t(v >> 32));
}

// Raw deflate (no zlib header), as zip's method 8 holds it.
inline std::string deflateRaw(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, uLong(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// One zip entry; its directory record claims `usize` (default: the real size) and, with
// zip64, puts the sizes in a zip64 extra field.
struct ZipEntry {
  std::string name;     // with ".npy"
  std::string content;  // the .npy
  bool deflated = false;
  int64_t usize = -1;
  bool zip64 = false;
  int64_t localOffset = -1;  // default: where it is written; given, no local record is written
};

// The entries, their central directory and its end record, which claims `claimedEntries`
// (default: as many as there are).
inline std::string zipOf(const std::vector<ZipEntry>& entries, int64_t claimedEntries = -1) {
  std::string out, central;
  for(const ZipEntry& e : entries) {
    std::string data = e.deflated ? deflateRaw(e.content) : e.content;
    uint32_t crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(e.content.data()), uInt(e.content.size())));
    uint64_t usize = e.usize >= 0 ? uint64_t(e.usize) : e.content.size();
    uint64_t offset = e.localOffset >= 0 ? uint64_t(e.localOffset) : out.size();
    std::string extra;
    if(e.zip64) {
      put16(extra, 1);
      put16(extra, 16);
      put64(extra, usize);
      put64(extra, data.size());
    }
    std::string fields;  // from "version needed" to the extra field's length, as both headers have them
    put16(fields, 20);
    put16(fields, 0);
    put16(fields, e.deflated ? 8 : 0);
    put16(fields, 0);
    put16(fields, 0x21);
    put32(fields, crc);
    put32(fields, e.zip64 ? 0xFFFFFFFF : uint32_t(data.size()));
    put32(fields, e.zip64 ? 0xFFFFFFFF : uint32_t(usize));
    put16(fields, uint32_t(e.name.size()));
    put16(fields, uint32_t(extra.size()));
    if(e.localOffset < 0) {
      put32(out, 0x04034b50);
      out += fields + e.name + extra + data;
    }
    put32(central, 0x02014b50);
    put16(central, 20);
    central += fields;
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, uint32_t(offset));
    central += e.name + extra;
  }
  uint64_t count = claimedEntries >= 0 ? uint64_t(claimedEntries) : entries.size();
  std::string end;
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, uint32_t(count));
  put16(end, uint32_t(count));
  put32(end, uint32_t(central.size()));
  put32(end, uint32_t(out.size()));
  put16(end, 0);
  return out + central + end;
}

}  // namespace marian::fuzz
