#pragma once
// defines: marian::NpzItem, readNpz, writeNpz — numpy's .npz (a zip of .npy arrays), so that
// users can open model files with numpy.load and we can read what numpy writes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/file_util.h"

namespace marian {

struct NpzItem {
  std::string name;           // without the ".npy" suffix
  std::vector<size_t> shape;  // C order
  std::string descr;          // numpy dtype string: "<f4", "<i4", "|u1", ...
  std::vector<char> bytes;    // raw little-endian data

  size_t elements() const;
  size_t itemSize() const;  // from descr
};

// Reads every array. Throws Error naming the file (and the array) when the file is missing,
// truncated, not a zip, uses an unsupported compression, fails its CRC or holds a bad .npy.
std::vector<NpzItem> readNpz(const std::string& path);

// Writes uncompressed (as numpy.savez does) through an AtomicFile, so an interrupted write
// never destroys an existing file.
void writeNpz(const std::string& path, const std::vector<NpzItem>& items);

// The same, array by array from memory the caller keeps: nothing is copied, and the file is
// never held in memory whole (a checkpoint of a large model).
class NpzWriter {
public:
  // zip64Limit: sizes and offsets from it on go into zip64 records (a test lowers it to write
  // them without 4 GiB of data)
  explicit NpzWriter(const std::string& path, uint64_t zip64Limit = 0xFFFFFFFFull)
      : path_(path), out_(path), zip64Limit_(zip64Limit) {}
  void add(const std::string& name, const std::vector<size_t>& shape, const std::string& descr, const void* data,
           size_t bytes);
  void addFloat32(const std::string& name, const std::vector<float>& values) {
    add(name, {values.size()}, "<f4", values.data(), values.size() * sizeof(float));
  }
  void commit();  // the directory, then the rename over the path

private:
  std::string path_;
  AtomicFile out_;
  std::string central_;
  uint64_t zip64Limit_;
  uint64_t offset_ = 0;
  size_t count_ = 0;
};

// Makes a float32 / int32 item from host data.
NpzItem npzFloat32(const std::string& name, std::vector<size_t> shape, const float* data);
NpzItem npzInt32(const std::string& name, std::vector<size_t> shape, const int* data);

}  // namespace marian
