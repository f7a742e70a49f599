// Hostile .npz model files (issue 19): zip directories or .npy headers that claim more than the
// file holds, deflated arrays as numpy's savez_compressed writes them, overflowing shapes and
// unsupported dtypes. Each is an Error whose message names the file and the array, never a crash,
// a huge allocation or garbage in the message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/npz.h"
#include "hostile_files.h"
#include "training/loop/checkpoint.h"
#include "zip_writer.h"

namespace marian {
namespace {

using namespace hostile;
using fuzz::put16;
using fuzz::zipOf;
using Entry = fuzz::ZipEntry;

// An .npy as numpy writes it, with the header's fields given as text.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  put16(out, uint32_t(dict.size()));
  return out + dict + data;
}

std::string floats(size_t n) {
  std::string out(n * 4, '\0');
  for(size_t i = 0; i < n; ++i) {
    float v = float(i) * 0.5f;
    std::memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

std::string npzFile(const std::string& name, const std::vector<Entry>& entries, int64_t claimedEntries = -1) {
  std::string path = temp(name);
  writeAll(path, zipOf(entries, claimedEntries));
  return path;
}

TEST(HostileNpz, DeflatedArraysAsNumpySavezCompressedWritesThemAreRead) {
  std::string path = npzFile("deflated.npz", {{"bias.npy", npy("<f4", "(1000,)", floats(1000)), true},
                                              {"empty.npy", npy("<f4", "(0, 5)", ""), true},
                                              {"scalar.npy", npy("<i4", "()", std::string(4, '\1')), true}});
  std::vector<NpzItem> items = readNpz(path);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].name, "bias");
  EXPECT_EQ(items[0].shape, std::vector<size_t>{1000});
  EXPECT_EQ(std::string(items[0].bytes.begin(), items[0].bytes.end()), floats(1000));
  EXPECT_EQ(items[1].shape, (std::vector<size_t>{0, 5}));
  EXPECT_TRUE(items[1].bytes.empty());
  EXPECT_TRUE(items[2].shape.empty());
  EXPECT_EQ(items[2].bytes.size(), 4u);
}

TEST(HostileNpz, ADeflatedSizeClaimBeyondDeflatesRatioIsRefusedBeforeAllocating) {
  // the 171 KB file of issue 19 claimed 0xFFFFFFF0 bytes and took 4.36 GB
  std::string content = npy("<f4", "(40000,)", floats(40000));
  Entry e{"decoder_W.npy", content, true, 0xFFFFFFF0};
  std::string path = npzFile("ratio.npz", {e});
  expectError([&] { readNpz(path); }, {path, "'decoder_W'", "4294967280", "more than deflate can produce"});
}

TEST(HostileNpz, AZip64ClaimOf2To40BytesIsAnErrorNotBadAlloc) {
  std::string content = npy("<f4", "(1000,)", floats(1000));
  std::string path = npzFile("zip64.npz", {{"bias.npy", content, true, int64_t(1) << 40, true}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "1099511627776"});
  // stored, zip64: the claim must equal the stored size and lie within the file
  path = npzFile("zip64-stored.npz", {{"bias.npy", content, false, int64_t(1) << 40, true}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "1099511627776"});
}

TEST(HostileNpz, ADeflatedClaimMustMatchTheNpyHeader) {
  std::string content = npy("<f4", "(1000,)", floats(1000));
  // within deflate's ratio, but not what the header's shape needs
  std::string path = npzFile("claim.npz", {{"bias.npy", content, true, int64_t(content.size()) + 4000}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "(1000,)", "needs " + std::to_string(content.size())});
  // the header's shape agrees with the claim, the data inflates to more
  path = npzFile("longer.npz", {{"bias.npy", content + floats(10), true, int64_t(content.size())}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "more than"});
  // ... or to less
  std::string shortData = npy("<f4", "(1010,)", floats(1000));
  path = npzFile("shorter.npz", {{"bias.npy", shortData, true, int64_t(shortData.size()) + 40}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "inflates to " + std::to_string(shortData.size())});
}

TEST(HostileNpz, AStoredClaimPastTheEndOfTheFileIsNamed) {
  std::string content = npy("<f4", "(10,)", floats(10));
  std::string path = npzFile("stored.npz", {{"bias.npy", content, false, 0xFFFFFFF0}});
  expectError([&] { readNpz(path); }, {path, "'bias'", "4294967280"});
}

TEST(HostileNpz, ShapesThatOverflowOrAreNotNumbersAreNamed) {
  // 2^62 x 4 floats: the product wraps to 0 bytes, which an unchecked reader accepts
  std::string path = npzFile("overflow.npz", {{"W.npy", npy("<f4", "(4611686018427387904, 4)", "")}});
  expectError([&] { readNpz(path); }, {path, "'W'", "too large"});
  path = npzFile("overflow2.npz", {{"W.npy", npy("<f4", "(99999999999999999999999,)", "")}});
  expectError([&] { readNpz(path); }, {path, "'W'", "too large"});
  for(std::string shape : {"(-1,)", "(3 4)", "(1e3,)", "(3,,4)", "(,)", "(0x10,)"}) {
    path = npzFile("shape.npz", {{"W.npy", npy("<f4", shape, "")}});
    expectError([&] { readNpz(path); }, {path, "'W'", "bad shape"});
  }
}

TEST(HostileNpz, UnsupportedDtypesAreNamed) {
  for(std::string descr : {"<f99999999999", ">f4", "<f3", "<c8", "<f4x", "|b2", "O"}) {
    std::string path = npzFile("dtype.npz", {{"W.npy", npy(descr, "(1,)", "abcd")}});
    expectError([&] { readNpz(path); }, {path, "'W'", "dtype"});
  }
}

TEST(HostileNpz, ADirectoryOrADeviceGivenAsTheModelIsNamed) {
  std::string dir = temp("model-dir");
  std::filesystem::create_directories(dir);
  expectError([&] { readNpz(dir); }, {dir, "directory"});
  expectError([&] { readCheckpoint(dir); }, {dir, "directory"});
  expectError([&] { readNpz("/dev/null"); }, {"/dev/null"});
}

TEST(HostileNpz, EntriesThatShareTheirDataOrOutnumberTheFileAreRefused) {
  // 200 directory entries, all pointing at the first entry's data: 200 copies of it in memory
  std::string content = npy("<f4", "(1000,)", floats(1000));
  std::vector<Entry> entries{{"a.npy", content}};
  for(int i = 0; i < 200; ++i)
    entries.push_back({"b" + std::to_string(i) + ".npy", content, false, -1, false, 0});
  std::string path = npzFile("shared.npz", entries);
  expectError([&] { readNpz(path); }, {path, "'b2'", "claim"});
  path = npzFile("count.npz", {{"a.npy", content}}, 65535);
  expectError([&] { readNpz(path); }, {path, "65535 entries"});
}

TEST(HostileNpz, AFileOfTheWriterReadsBackAndAnArrayWithABadDtypeIsNotWritten) {
  std::string path = temp("writer.npz");
  float v[3] = {1, 2, 3};
  writeNpz(path, {npzFloat32("a", {3}, v)});
  EXPECT_EQ(readNpz(path).at(0).shape, std::vector<size_t>{3});
  NpzItem bad{"b", {0}, "<q9", {}};
  expectError([&] { writeNpz(path, {bad}); }, {path, "'b'", "<q9"});
  NpzItem wraps{"c", {size_t(1) << 62, 4}, "<f4", {}};
  expectError([&] { writeNpz(path, {wraps}); }, {path, "'c'"});
}


}  // namespace
}  // namespace marian
