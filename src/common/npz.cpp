#include "common/npz.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/error.h"
#include "common/file_util.h"

namespace marian {

namespace {

// --- little-endian byte access with bounds checks --------------------------------------

struct Reader {
  const std::vector<char>& buf;
  const std::string& path;

  void need(size_t pos, size_t len, const char* what) const {
    ABORT_IF(pos > buf.size() || len > buf.size() - pos,
             "Model file '{}' is truncated or corrupt: {} lies past the end of the file", path, what);
  }
  uint32_t u16(size_t pos) const {
    need(pos, 2, "a zip record");
    return uint8_t(buf[pos]) | uint8_t(buf[pos + 1]) << 8;
  }
  uint32_t u32(size_t pos) const {
    need(pos, 4, "a zip record");
    return u16(pos) | u16(pos + 2) << 16;
  }
  uint64_t u64(size_t pos) const { return uint64_t(u32(pos)) | uint64_t(u32(pos + 4)) << 32; }
};

void put16(std::string& out, uint32_t v) {
  out.push_back(char(v & 0xff));
  out.push_back(char((v >> 8) & 0xff));
}
void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;
constexpr uint32_t kZip64EndOfCentral = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;

// --- .npy header ------------------------------------------------------------------------

std::string npyHeader(const NpzItem& item) {
  std::string shape = "(";
  for(size_t d : item.shape)
    shape += std::to_string(d) + ", ";
  // "(3, 4)" but "(3,)", as Python writes a 1-tuple
  if(item.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if(item.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string dict =
      "{'descr': '" + item.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
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

NpzItem parseNpy(const std::string& path, const std::string& name, const char* data, size_t size) {
  auto fail = [&](const std::string& why) {
    ABORT("Model file '{}': array '{}' is corrupt: {}", path, name, why);
  };
  if(size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
    fail("no .npy magic");
  int major = uint8_t(data[6]);
  size_t headerLen, offset;
  if(major == 1) {
    headerLen = uint8_t(data[8]) | uint8_t(data[9]) << 8;
    offset = 10;
  } else if(major == 2 || major == 3) {
    if(size < 12)
      fail("truncated header");
    headerLen = uint32_t(uint8_t(data[8])) | uint32_t(uint8_t(data[9])) << 8 |
                uint32_t(uint8_t(data[10])) << 16 | uint32_t(uint8_t(data[11])) << 24;
    offset = 12;
  } else {
    fail(format("unsupported .npy version {}", major));
  }
  if(offset + headerLen > size)
    fail("truncated header");
  std::string dict(data + offset, headerLen);

  NpzItem item;
  item.name = name;
  std::string descr = dictValue(dict, "descr");
  if(descr.size() < 3 || (descr.front() != '\'' && descr.front() != '"'))
    fail("header has no dtype ('descr')");
  item.descr = descr.substr(1, descr.size() - 2);
  if(dictValue(dict, "fortran_order") != "False")
    fail("Fortran-ordered arrays are not supported");
  std::string shape = dictValue(dict, "shape");
  if(shape.empty())
    fail("header has no shape");
  for(size_t i = 1; i < shape.size();) {
    size_t j = shape.find_first_of(",)", i);
    std::string tok = shape.substr(i, j - i);
    size_t b = tok.find_first_not_of(' ');
    if(b != std::string::npos) {
      tok = tok.substr(b);
      char* end = nullptr;
      unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
      if(end == tok.c_str())
        fail("bad shape " + shape);
      item.shape.push_back(size_t(v));
    }
    if(j == std::string::npos || shape[j] == ')')
      break;
    i = j + 1;
  }
  if(item.itemSize() == 0)
    fail("unsupported dtype '" + item.descr + "'");
  size_t bytes = item.elements() * item.itemSize();
  size_t dataOffset = offset + headerLen;
  if(size - dataOffset != bytes)
    fail(format("holds {} data bytes but shape {} of {} needs {}", size - dataOffset, shape,
                item.descr, bytes));
  item.bytes.assign(data + dataOffset, data + size);
  return item;
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  ABORT_IF(!in, "Cannot open model file '{}': {}", path, std::strerror(errno));
  std::streamsize size = in.tellg();
  in.seekg(0);
  std::vector<char> buf(static_cast<size_t>(size));
  ABORT_IF(size > 0 && !in.read(buf.data(), size), "Cannot read model file '{}'", path);
  return buf;
}

std::vector<char> inflateRaw(const std::string& path, const std::string& name, const char* src,
                             size_t srcLen, size_t outLen) {
  std::vector<char> out(outLen);
  z_stream zs{};
  ABORT_IF(inflateInit2(&zs, -MAX_WBITS) != Z_OK, "zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
  zs.avail_in = uInt(srcLen);
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(outLen);
  int rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  ABORT_IF(rc != Z_STREAM_END || zs.total_out != outLen,
           "Model file '{}': array '{}' is corrupt: its compressed data does not inflate", path,
           name);
  return out;
}

}  // namespace

size_t NpzItem::itemSize() const {
  if(descr.size() < 3)
    return 0;
  char kind = descr[1];
  if(kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    return 0;
  return size_t(std::atoi(descr.c_str() + 2));
}

size_t NpzItem::elements() const {
  size_t n = 1;
  for(size_t d : shape)
    n *= d;
  return n;
}

std::vector<NpzItem> readNpz(const std::string& path) {
  std::vector<char> buf = readFile(path);
  Reader r{buf, path};
  ABORT_IF(buf.size() < 22, "Model file '{}' is truncated or not an .npz file ({} bytes)", path,
           buf.size());

  // The end-of-central-directory record sits within the last 64 KiB + 22 bytes.
  size_t eocd = std::string::npos;
  size_t lowest = buf.size() > 65557 ? buf.size() - 65557 : 0;
  for(size_t p = buf.size() - 22 + 1; p-- > lowest;) {
    if(r.u32(p) == kEndOfCentral) {
      eocd = p;
      break;
    }
  }
  ABORT_IF(eocd == std::string::npos,
           "Model file '{}' is truncated or not an .npz file (no zip directory)", path);
  uint64_t entries = r.u16(eocd + 10);
  uint64_t cdOffset = r.u32(eocd + 16);
  if(eocd >= 20 && r.u32(eocd - 20) == kZip64Locator) {
    uint64_t z64 = r.u64(eocd - 20 + 8);
    ABORT_IF(r.u32(size_t(z64)) != kZip64EndOfCentral, "Model file '{}' has a corrupt zip64 record",
             path);
    entries = r.u64(size_t(z64) + 32);
    cdOffset = r.u64(size_t(z64) + 48);
  }

  std::vector<NpzItem> items;
  size_t p = size_t(cdOffset);
  for(uint64_t e = 0; e < entries; ++e) {
    ABORT_IF(r.u32(p) != kCentralHeader, "Model file '{}' has a corrupt zip directory", path);
    uint32_t method = r.u16(p + 10);
    uint32_t crc = r.u32(p + 16);
    uint64_t csize = r.u32(p + 20), usize = r.u32(p + 24);
    uint32_t nameLen = r.u16(p + 28), extraLen = r.u16(p + 30), commentLen = r.u16(p + 32);
    uint64_t local = r.u32(p + 42);
    r.need(p + 46, nameLen + extraLen, "a zip directory entry");
    std::string name(&buf[p + 46], nameLen);
    // zip64 extra field: 64-bit values for those 32-bit fields that are 0xFFFFFFFF, in order.
    for(size_t x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      uint32_t id = r.u16(x), len = r.u16(x + 2);
      if(id == 0x0001) {
        size_t v = x + 4;
        if(usize == 0xFFFFFFFF) { usize = r.u64(v); v += 8; }
        if(csize == 0xFFFFFFFF) { csize = r.u64(v); v += 8; }
        if(local == 0xFFFFFFFF) { local = r.u64(v); v += 8; }
      }
      x += 4 + len;
    }
    p += 46 + nameLen + extraLen + commentLen;

    std::string arrayName = name;
    if(arrayName.size() > 4 && arrayName.compare(arrayName.size() - 4, 4, ".npy") == 0)
      arrayName.resize(arrayName.size() - 4);
    ABORT_IF(r.u32(size_t(local)) != kLocalHeader,
             "Model file '{}': array '{}' is corrupt: bad local zip header", path, arrayName);
    size_t dataPos = size_t(local) + 30 + r.u16(size_t(local) + 26) + r.u16(size_t(local) + 28);
    ABORT_IF(dataPos > buf.size() || csize > buf.size() - dataPos,
             "Model file '{}' is truncated: array '{}' needs {} bytes past the end of the file",
             path, arrayName, dataPos + csize - buf.size());

    std::vector<char> raw;
    if(method == 0) {
      ABORT_IF(csize != usize, "Model file '{}': array '{}' is corrupt: stored sizes differ", path,
               arrayName);
      raw.assign(&buf[dataPos], &buf[dataPos] + csize);
    } else if(method == 8) {
      raw = inflateRaw(path, arrayName, &buf[dataPos], size_t(csize), size_t(usize));
    } else {
      ABORT("Model file '{}': array '{}' uses zip compression method {}, which is not supported",
            path, arrayName, method);
    }
    uint32_t actual = uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(raw.data()), uInt(raw.size())));
    ABORT_IF(actual != crc, "Model file '{}': array '{}' is corrupt: CRC mismatch", path, arrayName);
    items.push_back(parseNpy(path, arrayName, raw.data(), raw.size()));
  }
  return items;
}

void writeNpz(const std::string& path, const std::vector<NpzItem>& items) {
  std::string central, out;  // the archive is built in memory, then written atomically
  uint64_t offset = 0;
  for(const NpzItem& item : items) {
    ABORT_IF(item.bytes.size() != item.elements() * item.itemSize(),
             "Cannot save array '{}' to '{}': {} bytes do not match its shape", item.name, path,
             item.bytes.size());
    std::string header = npyHeader(item);
    uint64_t size = header.size() + item.bytes.size();
    ABORT_IF(size >= 0xFFFFFFFFull || offset >= 0xFFFFFFFFull,
             "Cannot save '{}': arrays over 4 GiB are not supported", path);
    uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), uInt(header.size()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(item.bytes.data()), uInt(item.bytes.size()));
    std::string name = item.name + ".npy";

    std::string local;
    put32(local, kLocalHeader);
    put16(local, 20);          // version needed
    put16(local, 0);           // flags
    put16(local, 0);           // method: stored
    put16(local, 0);           // time
    put16(local, 0x21);        // date 1980-01-01
    put32(local, uint32_t(crc));
    put32(local, uint32_t(size));
    put32(local, uint32_t(size));
    put16(local, uint32_t(name.size()));
    put16(local, 0);
    local += name;

    put32(central, kCentralHeader);
    put16(central, 20);  // made by
    central += local.substr(4, 26);
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, uint32_t(offset));
    central += name;

    out += local;
    out += header;
    out.append(item.bytes.data(), item.bytes.size());
    offset += local.size() + size;
  }
  std::string end;
  put32(end, kEndOfCentral);
  put16(end, 0);
  put16(end, 0);
  put16(end, uint32_t(items.size()));
  put16(end, uint32_t(items.size()));
  put32(end, uint32_t(central.size()));
  put32(end, uint32_t(offset));
  put16(end, 0);
  writeFileAtomic(path, out + central + end);
}

NpzItem npzFloat32(const std::string& name, std::vector<size_t> shape, const float* data) {
  NpzItem item{name, std::move(shape), "<f4", {}};
  const char* p = reinterpret_cast<const char*>(data);
  item.bytes.assign(p, p + item.elements() * 4);
  return item;
}

NpzItem npzInt32(const std::string& name, std::vector<size_t> shape, const int* data) {
  NpzItem item{name, std::move(shape), "<i4", {}};
  const char* p = reinterpret_cast<const char*>(data);
  item.bytes.assign(p, p + item.elements() * 4);
  return item;
}

}  // namespace marian
