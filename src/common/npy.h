#pragma once
// defines: marian::npy — numpy's .npy format inside an .npz: the header written for an array, and
// an entry's header and data read back with every field checked (a corrupt file is an Error
// naming the file and the array). Used by common/npz.cpp (and its field writers by fuzz/zip_writer.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/npz.h"

namespace marian {
namespace npy {

// little-endian writes of the .npy header's and the zip records' fields
inline void put16(std::string& out, uint32_t v) {
  out.push_back(char(v & 0xff));
  out.push_back(char((v >> 8) & 0xff));
}
inline void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
inline void put64(std::string& out, uint64_t v) {
  put32(out, uint32_t(v));
  put32(out, uint32_t(v >> 32));
}

// The .npy header (magic, version 1.0, the dict, padded to 64 bytes) of an array.
std::string npyHeader(const std::string& descr, const std::vector<size_t>& dims);
// The value of `key` in the header's dict text, "" when absent.
std::string dictValue(const std::string& dict, const std::string& key);
[[noreturn]] void corrupt(const std::string& path, const std::string& name, const std::string& why);
// Bytes of an array of `shape` and items of `itemSize` bytes, or false on overflow.
bool arrayBytes(const std::vector<size_t>& shape, size_t itemSize, size_t& bytes);
// Where the .npy header that starts `data` ends (magic, version, length and the dict), from its
// first 10 (version 1) or 12 bytes (versions 2 and 3).
size_t npyHeaderEnd(const std::string& path, const std::string& name, const char* data, size_t size);
// The .npy header in data[0, headerEnd): the array's name, shape and dtype (no bytes yet), and
// how many bytes header and data take together.
struct NpyHeader {
  NpzItem item;
  size_t headerEnd = 0, total = 0;
};
NpyHeader parseNpyHeader(const std::string& path, const std::string& name, const char* data, size_t headerEnd);
// An array from an entry's bytes: the header parsed, the data moved out of `raw`.
NpzItem npyItem(const std::string& path, const std::string& name, std::vector<char>&& raw);

}  // namespace npy
}  // namespace marian
