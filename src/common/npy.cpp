#include "common/npy.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "common/format.h"

namespace marian {

size_t NpzItem::itemSize() const {
  // byte order (little-endian or not applicable), kind, size: "<f4", "|u1", "<i8" ...
  if(descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    return 0;
  char kind = descr[1];
  if(kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    return 0;
  size_t n = size_t(descr[2] - '0');
  if(n != 1 && n != 2 && n != 4 && n != 8)
    return 0;
  if((kind == 'b' && n != 1) || (kind == 'f' && n == 1))
    return 0;
  return n;
}

size_t NpzItem::elements() const {
  size_t n = 1;
  for(size_t d : shape)
    n *= d;
  return n;
}

namespace npy {

// --- .npy header ------------------------------------------------------------------------

std::string npyHeader(const std::string& descr, const std::vector<size_t>& dims) {
  std::string shape = "(";
  for(size_t d : dims)
    shape += std::to_string(d) + ", ";
  // "(3, 4)" but "(3,)", as Python writes a 1-tuple
  if(dims.size() > 1)
    shape.resize(shape.size() - 2);
  else if(dims.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic(6) + version(2) + len(2) + dict + padding + '\n' is a multiple of 64, as numpy does.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string header("\x93NUMPY\x01\x00", 8);
  put16(header, uint32_t(dict.size()));
  return header + dict;
}

std::string dictValue(const std::string& dict, const std::string& key) {
  size_t k = dict.find("'" + key + "'");
  if(k == std::string::npos)
    return "";
  size_t colon = dict.find(':', k);
  if(colon == std::string::npos)
    return "";
  size_t begin = dict.find_first_not_of(' ', colon + 1);
  if(begin == std::string::npos)
    return "";
  if(dict[begin] == '(') {
    size_t end = dict.find(')', begin);
    return end == std::string::npos ? "" : dict.substr(begin, end - begin + 1);
  }
  size_t end = dict.find_first_of(",}", begin);
  return dict.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

[[noreturn]] void corrupt(const std::string& path, const std::string& name, const std::string& why) {
  ABORT("Model file '{}': array '{}' is corrupt: {}", path, name, why);
}

// a * b, or false when it does not fit in size_t
bool multiply(size_t a, size_t b, size_t& out) { return !__builtin_mul_overflow(a, b, &out); }

// Bytes of an array of `shape` and items of `itemSize` bytes, or false on overflow.
bool arrayBytes(const std::vector<size_t>& shape, size_t itemSize, size_t& bytes) {
  bytes = itemSize;
  for(size_t d : shape)
    if(!multiply(bytes, d, bytes))
      return false;
  return true;
}

// Where the .npy header that starts `data` ends (magic, version, length and the dict), from its
// first 10 (version 1) or 12 bytes (versions 2 and 3).
size_t npyHeaderEnd(const std::string& path, const std::string& name, const char* data, size_t size) {
  if(size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
    corrupt(path, name, "no .npy magic");
  int major = uint8_t(data[6]);
  if(major == 1)
    return 10 + (size_t(uint8_t(data[8])) | size_t(uint8_t(data[9])) << 8);
  if(major == 2 || major == 3) {
    if(size < 12)
      corrupt(path, name, "truncated header");
    return 12 + (size_t(uint8_t(data[8])) | size_t(uint8_t(data[9])) << 8 | size_t(uint8_t(data[10])) << 16 |
                 size_t(uint8_t(data[11])) << 24);
  }
  corrupt(path, name, format("unsupported .npy version {}", major));
}

// The shape tuple "(3, 4)", "(3,)" or "()": non-negative decimal integers only.
std::vector<size_t> parseShape(const std::string& path, const std::string& name, const std::string& shape) {
  auto bad = [&](const std::string& why) { corrupt(path, name, "bad shape " + shape + ": " + why); };
  std::vector<size_t> dims;
  std::string inner = shape.substr(1, shape.size() - 2);  // dictValue returns "(...)"
  size_t i = 0;
  while(i < inner.size()) {
    size_t j = inner.find(',', i);
    std::string tok = inner.substr(i, j == std::string::npos ? std::string::npos : j - i);
    size_t b = tok.find_first_not_of(' '), e = tok.find_last_not_of(' ');
    if(b == std::string::npos) {
      // only "(3,)": an empty item after the last comma
      if(j != std::string::npos || dims.empty())
        bad("an empty dimension");
      break;
    }
    tok = tok.substr(b, e - b + 1);
    if(tok.find_first_not_of("0123456789") != std::string::npos)
      bad("'" + tok + "' is not a non-negative integer");
    errno = 0;
    unsigned long long v = std::strtoull(tok.c_str(), nullptr, 10);
    if(errno == ERANGE || v > std::numeric_limits<size_t>::max())
      bad("dimension " + tok + " is too large");
    dims.push_back(size_t(v));
    if(dims.size() > 64)
      bad("more than 64 dimensions");
    if(j == std::string::npos)
      break;
    i = j + 1;
  }
  return dims;
}

NpyHeader parseNpyHeader(const std::string& path, const std::string& name, const char* data, size_t headerEnd) {
  size_t offset = uint8_t(data[6]) == 1 ? 10 : 12;
  std::string dict(data + offset, headerEnd - offset);
  NpyHeader h;
  h.headerEnd = headerEnd;
  h.item.name = name;
  std::string descr = dictValue(dict, "descr");
  if(descr.size() < 3 || (descr.front() != '\'' && descr.front() != '"') || descr.back() != descr.front())
    corrupt(path, name, "header has no dtype ('descr')");
  h.item.descr = descr.substr(1, descr.size() - 2);
  if(dictValue(dict, "fortran_order") != "False")
    corrupt(path, name, "Fortran-ordered arrays are not supported");
  std::string shape = dictValue(dict, "shape");
  if(shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    corrupt(path, name, "header has no shape");
  h.item.shape = parseShape(path, name, shape);
  size_t itemSize = h.item.itemSize();
  if(itemSize == 0)
    corrupt(path, name, "unsupported dtype '" + h.item.descr + "'");
  size_t bytes;
  if(!arrayBytes(h.item.shape, itemSize, bytes) || bytes > std::numeric_limits<size_t>::max() - headerEnd)
    corrupt(path, name, format("shape {} of {} is too large", shape, h.item.descr));
  h.total = headerEnd + bytes;
  return h;
}

// An array from an entry's bytes: the header parsed, the data moved out of `raw`.
NpzItem npyItem(const std::string& path, const std::string& name, std::vector<char>&& raw) {
  size_t headerEnd = npyHeaderEnd(path, name, raw.data(), raw.size());
  if(headerEnd > raw.size())
    corrupt(path, name, "truncated header");
  NpyHeader h = parseNpyHeader(path, name, raw.data(), headerEnd);
  if(h.total != raw.size())
    corrupt(path, name, format("holds {} data bytes but shape {} of {} needs {}", raw.size() - headerEnd,
                               dictValue(std::string(raw.data(), headerEnd), "shape"), h.item.descr,
                               h.total - headerEnd));
  raw.erase(raw.begin(), raw.begin() + long(headerEnd));
  h.item.bytes = std::move(raw);
  return std::move(h.item);
}

}  // namespace npy
}  // namespace marian
