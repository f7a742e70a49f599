// Model files: numpy-compatible .npz, saving and loading by parameter name, and clear errors
// for every kind of bad file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/npz.h"
#include "graph/operators.h"
#include "temp_paths.h"
#include "tensors/kernels.h"

namespace marian {
namespace {

std::string tempPath(const std::string& name) {
  return testpaths::tempPath("marian_npz_", name);
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A model with two parameters; the values are chosen, not random.
struct SmallModel {
  ExpressionGraph graph;
  SmallModel(Shape wShape = {2, 3}) {
    graph.param("decoder_W", wShape, inits::fromVector(iota(wShape.elements(), 0.5f)));
    graph.param("bias", Shape({3}), inits::fromValue(-1.f));
    graph.params().allocate();
  }
  static std::vector<float> iota(size_t n, float step) {
    std::vector<float> v(n);
    for(size_t i = 0; i < n; ++i)
      v[i] = float(i) * step;
    return v;
  }
};

// Runs f, expects an Error whose message contains every one of `parts`.
template <class F>
void expectError(F f, std::vector<std::string> parts) {
  try {
    f();
    FAIL() << "expected an error";
  } catch(const Error& e) {
    for(const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

TEST(Npz, SaveAndLoadRoundTripByName) {
  std::string path = tempPath("roundtrip.npz");
  SmallModel a;
  a.graph.params().save(path);
  SmallModel b;
  kernels::fill(b.graph.params().values(), 7.f);
  b.graph.params().load(path);
  EXPECT_EQ(kernels::toHost(b.graph.params().values()), kernels::toHost(a.graph.params().values()));
  // no temporary file is left behind
  EXPECT_EQ(std::fopen((path + ".tmp." + std::to_string(getpid())).c_str(), "rb"), nullptr);
}

TEST(Npz, FlatLayoutIsSortedByNameAndInitialisationIsOrderIndependent) {
  ExpressionGraph g1, g2;
  g1.param("b", {2}, inits::glorotUniform());
  g1.param("a", {3}, inits::glorotUniform());
  g2.param("a", {3}, inits::glorotUniform());
  g2.param("b", {2}, inits::glorotUniform());
  g1.params().allocate();
  g2.params().allocate();
  EXPECT_EQ(g1.params().entries()[g1.params().index("a")].offset, 0u);
  EXPECT_EQ(g1.params().entries()[g1.params().index("b")].offset, 3u);
  EXPECT_EQ(kernels::toHost(g1.params().values()), kernels::toHost(g2.params().values()));
}

bool haveNumpy() { return std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0; }

TEST(Npz, NumpyReadsOurFilesAndWeReadNumpys) {
  if(!haveNumpy())
    GTEST_SKIP() << "python3-numpy not installed (scripts/install-deps installs it)";
  std::string ours = tempPath("ours.npz"), theirs = tempPath("theirs.npz"),
              compressed = tempPath("theirs_z.npz");
  SmallModel a;
  a.graph.params().save(ours);
  std::string script =
      "import numpy as np, sys\n"
      "m = np.load('" + ours + "')\n"
      "assert sorted(m.files) == ['bias', 'decoder_W'], m.files\n"
      "assert m['decoder_W'].shape == (2, 3) and m['decoder_W'].dtype == np.float32\n"
      "assert (m['decoder_W'].ravel() == np.arange(6, dtype=np.float32) * 0.5).all()\n"
      "assert m['bias'].shape == (3,) and (m['bias'] == -1).all()\n"
      "w = np.arange(6, dtype=np.float32).reshape(2, 3) * 2\n"
      "b = np.array([1, 2, 3], dtype=np.float32)\n"
      "np.savez('" + theirs + "', decoder_W=w, bias=b)\n"
      "np.savez_compressed('" + compressed + "', decoder_W=w, bias=b)\n";
  writeAll(tempPath("check.py"), script);
  ASSERT_EQ(std::system(("/usr/bin/python3 " + tempPath("check.py")).c_str()), 0);
  for(const std::string& path : {theirs, compressed}) {
    SmallModel b;
    b.graph.params().load(path);
    EXPECT_EQ(kernels::toHost(b.graph.params().value("decoder_W")),
              (std::vector<float>{0, 2, 4, 6, 8, 10}));
    EXPECT_EQ(kernels::toHost(b.graph.params().value("bias")), (std::vector<float>{1, 2, 3}));
  }
}

// Past 4 GiB (a checkpoint of a few hundred million parameters) a size or an offset no longer
// fits its 32-bit zip field: the writer then adds zip64 records. The limit lowered to 300 bytes
// writes every case small: an entry below it, one whose size passes it, ones that start past it,
// and a directory past it (zip64's end record).
TEST(Npz, Zip64RecordsPastFourGibReadBackHereAndInNumpy) {
  std::string path = tempPath("zip64.npz");
  std::vector<std::pair<std::string, std::vector<float>>> arrays = {
      {"a", SmallModel::iota(2, 1.f)}, {"b", SmallModel::iota(40, 0.5f)}, {"c", SmallModel::iota(100, 0.25f)},
      {"d", SmallModel::iota(3, -1.f)}};
  {
    NpzWriter out(path, /*zip64Limit=*/300);
    for(const auto& [name, values] : arrays)
      out.addFloat32(name, values);
    out.commit();
  }
  std::string bytes = readAll(path);
  EXPECT_NE(bytes.find(std::string("\x50\x4b\x06\x06", 4)), std::string::npos) << "no zip64 end record";
  std::vector<NpzItem> items = readNpz(path);
  ASSERT_EQ(items.size(), arrays.size());
  for(size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(items[i].name, arrays[i].first);
    std::vector<float> read(items[i].elements());
    std::memcpy(read.data(), items[i].bytes.data(), items[i].bytes.size());
    EXPECT_EQ(read, arrays[i].second) << arrays[i].first;
  }
  if(!haveNumpy())
    GTEST_SKIP() << "python3-numpy not installed (scripts/install-deps installs it)";
  std::string script =
      "import numpy as np\n"
      "m = np.load('" + path + "')\n"
      "assert m.files == ['a', 'b', 'c', 'd'], m.files\n"
      "assert (m['c'] == np.arange(100, dtype=np.float32) * 0.25).all()\n"
      "assert (m['d'] == np.arange(3, dtype=np.float32) * -1).all()\n";
  writeAll(tempPath("check64.py"), script);
  EXPECT_EQ(std::system(("/usr/bin/python3 " + tempPath("check64.py")).c_str()), 0);
}

TEST(Npz, MissingFileNamesIt) {
  SmallModel m;
  expectError([&] { m.graph.params().load("/nonexistent/model.npz"); },
              {"/nonexistent/model.npz", "Cannot open"});
}

TEST(Npz, TruncatedFileIsAnErrorNotACrash) {
  std::string path = tempPath("trunc.npz");
  SmallModel a;
  a.graph.params().save(path);
  std::string bytes = readAll(path);
  // every possible cut: none may crash, each must name the file
  for(size_t cut = 0; cut < bytes.size(); cut += 7) {
    writeAll(path, bytes.substr(0, cut));
    SmallModel b;
    expectError([&] { b.graph.params().load(path); }, {path});
  }
}

TEST(Npz, CorruptDataFailsItsChecksum) {
  std::string path = tempPath("crc.npz");
  SmallModel a;
  a.graph.params().save(path);
  std::string bytes = readAll(path);
  size_t at = bytes.find("bias.npy") + 8 + 128 + 2;  // inside the first array's data
  bytes[at] ^= 0x55;
  writeAll(path, bytes);
  SmallModel b;
  expectError([&] { b.graph.params().load(path); }, {path, "bias", "CRC"});
}

TEST(Npz, NotAZipFile) {
  std::string path = tempPath("garbage.npz");
  writeAll(path, std::string(200, 'x'));
  SmallModel b;
  expectError([&] { b.graph.params().load(path); }, {path, "not an .npz"});
}

TEST(Npz, WrongShapeNamesFileAndParameter) {
  std::string path = tempPath("shape.npz");
  SmallModel a(Shape({3, 2}));
  a.graph.params().save(path);
  SmallModel b(Shape({2, 3}));
  expectError([&] { b.graph.params().load(path); }, {path, "decoder_W", "[2x3]", "(3,2"});
}

TEST(Npz, WrongDtypeNamesFileAndParameter) {
  std::string path = tempPath("dtype.npz");
  std::vector<int> w(6, 1);
  float bias[3] = {0, 0, 0};
  writeNpz(path, {npzInt32("decoder_W", {2, 3}, w.data()), npzFloat32("bias", {3}, bias)});
  SmallModel b;
  expectError([&] { b.graph.params().load(path); }, {path, "decoder_W", "<i4"});
}

TEST(Npz, MissingParameterIsNamed) {
  std::string path = tempPath("missing.npz");
  float bias[3] = {0, 0, 0};
  writeNpz(path, {npzFloat32("bias", {3}, bias)});
  SmallModel b;
  expectError([&] { b.graph.params().load(path); }, {path, "decoder_W"});
}

TEST(Npz, BadNpyHeaderNamesTheArray) {
  std::string path = tempPath("header.npz");
  NpzItem item = npzFloat32("bias", {3}, std::vector<float>(3).data());
  item.bytes.resize(8);  // data shorter than the shape says
  EXPECT_THROW(writeNpz(path, {item}), Error);
}

TEST(Npz, FailedWriteLeavesTheExistingFileIntact) {
  std::string path = tempPath("keep.npz");
  SmallModel a;
  a.graph.params().save(path);
  std::string before = readAll(path);
  NpzItem bad = npzFloat32("x", {2}, std::vector<float>(2).data());
  bad.bytes.resize(3);
  EXPECT_THROW(writeNpz(path, {bad}), Error);
  EXPECT_EQ(readAll(path), before);
  EXPECT_THROW(writeNpz("/nonexistent-dir/model.npz", {}), Error);
}

}  // namespace
}  // namespace marian
