#include "common/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/npy.h"

namespace marian {

using namespace npy;

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


constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;
constexpr uint32_t kZip64EndOfCentral = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;

std::vector<char> readFile(const std::string& path) {
  ABORT_IF(isDirectory(path), "Model file '{}' is a directory, not an .npz file", path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  ABORT_IF(!in, "Cannot open model file '{}': {}", path, std::strerror(errno));
  std::streamsize size = in.tellg();
  ABORT_IF(size < 0, "Cannot read model file '{}': it is not a regular file", path);
  in.seekg(0);
  std::vector<char> buf(static_cast<size_t>(size));
  ABORT_IF(size > 0 && !in.read(buf.data(), size), "Cannot read model file '{}'", path);
  return buf;
}

// deflate's largest ratio of output to input is 1032:1 (zlib's documentation); a directory that
// claims more than that, with some room for a short stream's fixed overhead, is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032, kDeflateSlack = 1024;

// Raw deflate data, inflated on demand into a buffer that grows only as far as data arrives.
class Inflater {
public:
  Inflater(const std::string& path, const std::string& name, const char* src, size_t srcLen)
      : path_(path), name_(name), src_(src), left_(srcLen) {
    ABORT_IF(inflateInit2(&zs_, -MAX_WBITS) != Z_OK, "Model file '{}': zlib cannot be initialised", path);
  }
  ~Inflater() { inflateEnd(&zs_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates into out[produced, want) (out.size() >= want); the stream must not end before.
  void fill(std::vector<char>& out, size_t want, size_t claimed) {
    while(produced_ < want) {
      feed();
      char* at = out.data() + produced_;
      zs_.next_out = reinterpret_cast<Bytef*>(at);
      zs_.avail_out = uInt(std::min<size_t>(want - produced_, 1u << 30));
      int rc = inflate(&zs_, Z_NO_FLUSH);
      produced_ += size_t(reinterpret_cast<char*>(zs_.next_out) - at);
      if(rc == Z_STREAM_END) {
        if(produced_ < want)
          corrupt(path_, name_, format("its compressed data inflates to {} bytes, not the {} its zip directory claims",
                                       produced_, claimed));
        ended_ = true;
      } else if(rc != Z_OK) {
        corrupt(path_, name_, format("its compressed data does not inflate ({})",
                                     zs_.msg ? zs_.msg : rc == Z_BUF_ERROR ? "truncated" : "zlib error"));
      }
    }
  }

  // The stream must end here.
  void finish(size_t claimed) {
    while(!ended_) {
      feed();
      char extra;
      zs_.next_out = reinterpret_cast<Bytef*>(&extra);
      zs_.avail_out = 1;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if(zs_.avail_out == 0)
        corrupt(path_, name_, format("its compressed data inflates to more than the {} bytes its zip directory claims",
                                     claimed));
      if(rc == Z_STREAM_END)
        ended_ = true;
      else if(rc != Z_OK)
        corrupt(path_, name_, format("its compressed data does not inflate ({})",
                                     zs_.msg ? zs_.msg : rc == Z_BUF_ERROR ? "truncated" : "zlib error"));
    }
  }

private:
  void feed() {
    if(zs_.avail_in == 0 && left_ > 0) {
      size_t n = std::min<size_t>(left_, 1u << 30);
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src_));
      zs_.avail_in = uInt(n);
      src_ += n;
      left_ -= n;
    }
  }
  const std::string& path_;
  const std::string& name_;
  const char* src_;
  size_t left_;
  size_t produced_ = 0;
  bool ended_ = false;
  z_stream zs_{};
};

// An entry's bytes (the whole .npy), inflated: the directory's claim `usize` is checked against
// deflate's largest ratio and against the .npy header's shape before the buffer grows to it.
std::vector<char> inflateEntry(const std::string& path, const std::string& name, const char* src, size_t csize,
                               size_t usize) {
  if(usize > csize * kMaxDeflateRatio + kDeflateSlack)
    corrupt(path, name, format("its zip directory claims {} bytes inflated from {} compressed bytes, more than deflate "
                               "can produce",
                               usize, csize));
  Inflater inflater(path, name, src, csize);
  std::vector<char> out(std::min<size_t>(usize, 12));
  inflater.fill(out, out.size(), usize);
  size_t headerEnd = npyHeaderEnd(path, name, out.data(), out.size());
  if(headerEnd > usize)
    corrupt(path, name, "truncated header");
  out.resize(headerEnd);
  inflater.fill(out, headerEnd, usize);
  NpyHeader h = parseNpyHeader(path, name, out.data(), headerEnd);
  if(h.total != usize)
    corrupt(path, name, format("its zip directory claims {} bytes but its .npy header (shape {}, dtype '{}') needs {}",
                               usize, dictValue(std::string(out.data(), headerEnd), "shape"), h.item.descr, h.total));
  // grows with the data that actually arrives, never past the claim
  while(out.size() < usize) {
    size_t next = std::min(usize, std::max<size_t>(out.size() * 2, 1 << 20));
    out.resize(next);
    inflater.fill(out, next, usize);
  }
  inflater.finish(usize);
  return out;
}

}  // namespace

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
    ABORT_IF(z64 >= buf.size() || r.u32(size_t(z64)) != kZip64EndOfCentral,
             "Model file '{}' has a corrupt zip64 record", path);
    entries = r.u64(size_t(z64) + 32);
    cdOffset = r.u64(size_t(z64) + 48);
  }
  // every directory entry takes at least 46 bytes
  ABORT_IF(entries > buf.size() / 46 || (cdOffset >= buf.size() && entries > 0),
           "Model file '{}' has a corrupt zip directory: {} entries at offset {} in a file of {} bytes", path,
           entries, cdOffset, buf.size());

  std::vector<NpzItem> items;
  uint64_t dataTotal = 0;  // entries hold disjoint parts of the file
  size_t p = size_t(cdOffset);
  for(uint64_t e = 0; e < entries; ++e) {
    ABORT_IF(r.u32(p) != kCentralHeader, "Model file '{}' has a corrupt zip directory", path);
    uint32_t method = r.u16(p + 10);
    uint32_t crc = r.u32(p + 16);
    uint64_t csize = r.u32(p + 20), usize = r.u32(p + 24);
    uint32_t nameLen = r.u16(p + 28), extraLen = r.u16(p + 30), commentLen = r.u16(p + 32);
    uint64_t local = r.u32(p + 42);
    r.need(p + 46, size_t(nameLen) + extraLen, "a zip directory entry");
    std::string name(buf.data() + p + 46, nameLen);
    std::string arrayName = name;
    if(arrayName.size() > 4 && arrayName.compare(arrayName.size() - 4, 4, ".npy") == 0)
      arrayName.resize(arrayName.size() - 4);
    // zip64 extra field: 64-bit values for those 32-bit fields that are 0xFFFFFFFF, in order.
    size_t extraEnd = p + 46 + nameLen + extraLen;
    for(size_t x = p + 46 + nameLen; x + 4 <= extraEnd;) {
      uint32_t id = r.u16(x), len = r.u16(x + 2);
      ABORT_IF(x + 4 + len > extraEnd, "Model file '{}': array '{}' has a corrupt zip extra field", path, arrayName);
      if(id == 0x0001) {
        size_t v = x + 4;
        auto next64 = [&](uint64_t& field) {
          ABORT_IF(v + 8 > x + 4 + len, "Model file '{}': array '{}' has a corrupt zip64 extra field", path,
                   arrayName);
          field = r.u64(v);
          v += 8;
        };
        if(usize == 0xFFFFFFFF)
          next64(usize);
        if(csize == 0xFFFFFFFF)
          next64(csize);
        if(local == 0xFFFFFFFF)
          next64(local);
      }
      x += 4 + len;
    }
    p += 46 + size_t(nameLen) + extraLen + commentLen;

    ABORT_IF(local >= buf.size() || r.u32(size_t(local)) != kLocalHeader,
             "Model file '{}': array '{}' is corrupt: bad local zip header", path, arrayName);
    size_t dataPos = size_t(local) + 30 + r.u16(size_t(local) + 26) + r.u16(size_t(local) + 28);
    ABORT_IF(dataPos > buf.size() || csize > buf.size() - dataPos,
             "Model file '{}' is truncated: array '{}' needs {} bytes past the end of the file",
             path, arrayName, dataPos > buf.size() ? dataPos - buf.size() : dataPos + csize - buf.size());
    dataTotal += csize;
    ABORT_IF(dataTotal > buf.size(),
             "Model file '{}' is corrupt: its zip entries (up to array '{}') claim {} bytes of a file of {}", path,
             arrayName, dataTotal, buf.size());

    const char* data = buf.data() + dataPos;
    std::vector<char> raw;
    if(method == 0) {
      ABORT_IF(csize != usize, "Model file '{}': array '{}' is corrupt: its zip directory claims {} bytes stored in {}",
               path, arrayName, usize, csize);
      raw.assign(data, data + csize);
    } else if(method == 8) {
      raw = inflateEntry(path, arrayName, data, size_t(csize), size_t(usize));
    } else {
      ABORT("Model file '{}': array '{}' uses zip compression method {}, which is not supported",
            path, arrayName, method);
    }
    uint32_t actual = uint32_t(crc32_z(0L, reinterpret_cast<const Bytef*>(raw.data()), raw.size()));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // a fuzzer cannot forge CRCs: what lies past them goes unfuzzed
    ABORT_IF(actual != crc, "Model file '{}': array '{}' is corrupt: CRC mismatch", path, arrayName);
#else
    (void)actual;
    (void)crc;
#endif
    items.push_back(npyItem(path, arrayName, std::move(raw)));
  }
  return items;
}

void writeNpz(const std::string& path, const std::vector<NpzItem>& items) {
  NpzWriter out(path);
  for(const NpzItem& item : items)
    out.add(item.name, item.shape, item.descr, item.bytes.data(), item.bytes.size());
  out.commit();
}

void NpzWriter::add(const std::string& arrayName, const std::vector<size_t>& shape, const std::string& descr,
                    const void* data, size_t dataBytes) {
  size_t bytes = 0, itemSize = NpzItem{arrayName, shape, descr, {}}.itemSize();
  ABORT_IF(itemSize == 0, "Cannot save array '{}' to '{}': unsupported dtype '{}'", arrayName, path_, descr);
  ABORT_IF(!arrayBytes(shape, itemSize, bytes) || dataBytes != bytes,
           "Cannot save array '{}' to '{}': {} bytes do not match its shape", arrayName, path_, dataBytes);
  std::string header = npyHeader(descr, shape);
  uint64_t size = header.size() + dataBytes;
  uLong crc = crc32_z(0L, reinterpret_cast<const Bytef*>(header.data()), header.size());
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(data), dataBytes);
  std::string name = arrayName + ".npy";
  // A size or an offset that a 32-bit field cannot hold goes into a zip64 extra field (its field
  // then 0xFFFFFFFF), as numpy's zipfile writes it; below the limit the file is what numpy and
  // Marian's cnpy write, which know no zip64.
  bool bigSize = size >= zip64Limit_, farOffset = offset_ >= zip64Limit_;
  uint32_t size32 = bigSize ? 0xFFFFFFFFu : uint32_t(size);
  uint32_t version = bigSize || farOffset ? 45 : 20;

  std::string localExtra, centralExtra;
  if(bigSize) {
    put16(localExtra, 0x0001);
    put16(localExtra, 16);
    put64(localExtra, size);  // uncompressed, then compressed: stored, the same
    put64(localExtra, size);
  }
  if(bigSize || farOffset) {
    put16(centralExtra, 0x0001);
    put16(centralExtra, uint32_t((bigSize ? 16 : 0) + (farOffset ? 8 : 0)));
    if(bigSize) {
      put64(centralExtra, size);
      put64(centralExtra, size);
    }
    if(farOffset)
      put64(centralExtra, offset_);
  }
  // the fields that the local header and the directory entry share, from "version needed" on
  auto common = [&](const std::string& extra) {
    std::string f;
    put16(f, version);  // version needed
    put16(f, 0);        // flags
    put16(f, 0);        // method: stored
    put16(f, 0);        // time
    put16(f, 0x21);     // date 1980-01-01
    put32(f, uint32_t(crc));
    put32(f, size32);   // compressed
    put32(f, size32);   // uncompressed
    put16(f, uint32_t(name.size()));
    put16(f, uint32_t(extra.size()));
    return f;
  };
  std::string local;
  put32(local, kLocalHeader);
  local += common(localExtra);
  local += name;
  local += localExtra;

  put32(central_, kCentralHeader);
  put16(central_, version);  // made by
  central_ += common(centralExtra);
  put16(central_, 0);  // comment
  put16(central_, 0);  // disk
  put16(central_, 0);  // internal attributes
  put32(central_, 0);  // external attributes
  put32(central_, farOffset ? 0xFFFFFFFFu : uint32_t(offset_));
  central_ += name;
  central_ += centralExtra;

  out_.write(local);
  out_.write(header);
  out_.write(data, dataBytes);
  offset_ += local.size() + size;
  ++count_;
}

void NpzWriter::commit() {
  std::string end;
  // the directory's offset, size or entry count past a 32-bit (16-bit) field: zip64's end record
  // and its locator before the classic end record, whose fields then say "see zip64"
  bool zip64 = offset_ >= zip64Limit_ || central_.size() >= zip64Limit_ || count_ >= 0xFFFF;
  if(zip64) {
    uint64_t record = offset_ + central_.size();
    put32(end, kZip64EndOfCentral);
    put64(end, 44);  // the record's size after this field
    put16(end, 45);  // made by
    put16(end, 45);  // version needed
    put32(end, 0);   // this disk
    put32(end, 0);   // the directory's disk
    put64(end, count_);
    put64(end, count_);
    put64(end, central_.size());
    put64(end, offset_);
    put32(end, kZip64Locator);
    put32(end, 0);  // the zip64 record's disk
    put64(end, record);
    put32(end, 1);  // disks
  }
  put32(end, kEndOfCentral);
  put16(end, 0);
  put16(end, 0);
  put16(end, zip64 ? 0xFFFFu : uint32_t(count_));
  put16(end, zip64 ? 0xFFFFu : uint32_t(count_));
  put32(end, zip64 ? 0xFFFFFFFFu : uint32_t(central_.size()));
  put32(end, zip64 ? 0xFFFFFFFFu : uint32_t(offset_));
  put16(end, 0);
  out_.write(central_);
  out_.write(end);
  out_.commit();
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
