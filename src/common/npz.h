#pragma once
// defines: marian::NpzItem, readNpz, writeNpz — numpy's .npz (a zip of .npy arrays), so that
// users can open model files with numpy.load and we can read what numpy writes.
#include <cstddef>
#include <string>
#include <vector>

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

// Writes uncompressed (as numpy.savez does) through writeFileAtomic, so an interrupted write
// never destroys an existing file.
void writeNpz(const std::string& path, const std::vector<NpzItem>& items);

// Makes a float32 / int32 item from host data.
NpzItem npzFloat32(const std::string& name, std::vector<size_t> shape, const float* data);
NpzItem npzInt32(const std::string& name, std::vector<size_t> shape, const int* data);

}  // namespace marian
