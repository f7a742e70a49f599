// Shapes, flat buffers and the workspace arena.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/cpu/blas_kernels.h"
#include "tensors/kernels.h"
#include "tensors/product_precision.h"

namespace marian {
namespace {

// cuBLAS is loaded when a GPU backend starts (tensors/gpu/cublas_library.h), not linked: mapping
// it costs a process about 215 MB of resident memory, CPU-only runs included.
TEST(Process, CpuWorkDoesNotMapCublas) {
  FlatBuffer buf(cpuDevice(), Type::float32, 4);
  kernels::gemm(buf.view(0, Shape({1, 1})), buf.view(1, Shape({1, 1})), buf.view(2, Shape({1, 1})), false, false, 1.f,
                0.f);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while(std::getline(maps, line))
    EXPECT_EQ(line.find("libcublas"), std::string::npos) << line;
}

TEST(Shape, ElementsAxesAndPrinting) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.elements(), 24u);
  EXPECT_EQ(s.rows(), 6u);
  EXPECT_EQ(s[-1], 4);
  EXPECT_EQ(s.axis(-3), 0);
  EXPECT_EQ(s.toString(), "[2x3x4]");
  EXPECT_THROW(s.axis(3), Error);
  EXPECT_THROW(Shape({1, 2, 3, 4, 5}), Error);
}

// Rows and a batch of matrices count the leading dimensions, so an empty trailing axis keeps
// them (a [4x0] matrix has 4 rows; [3x4x0], 3 matrices of 4 rows).
TEST(Shape, RowsAndMatricesFromTheLeadingDimensions) {
  EXPECT_EQ(Shape({2, 3, 4}).matrices(), 2u);
  EXPECT_EQ(Shape({5, 2, 3, 4}).matrices(), 10u);
  EXPECT_EQ(Shape({3, 4}).matrices(), 1u);
  EXPECT_EQ(Shape({7}).rows(), 1u);
  EXPECT_EQ(Shape({4, 0}).rows(), 4u);
  EXPECT_EQ(Shape({3, 4, 0}).rows(), 12u);
  EXPECT_EQ(Shape({3, 4, 0}).matrices(), 3u);
  EXPECT_EQ(Shape({3, 0, 5}).rows(), 0u);
  EXPECT_EQ(Shape({3, 0, 5}).matrices(), 3u);
  EXPECT_EQ(Shape({0, 4, 5}).matrices(), 0u);
}

TEST(Shape, Broadcasting) {
  EXPECT_EQ(Shape::broadcast({3, 4}, {4}), Shape({3, 4}));
  EXPECT_EQ(Shape::broadcast({2, 1, 4}, {3, 1}), Shape({2, 3, 4}));
  EXPECT_EQ(Shape::broadcast({1}, {2, 3}), Shape({2, 3}));
  try {
    Shape::broadcast({3, 4}, {3});
    FAIL() << "expected an error";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[3x4] and [3]"), std::string::npos) << e.what();
  }
  auto strides = broadcastStrides({2, 1, 4}, {2, 3, 4});
  EXPECT_EQ(strides[1], 4u);  // axis 0 of [2x1x4]
  EXPECT_EQ(strides[2], 0u);  // broadcast axis
  EXPECT_EQ(strides[3], 1u);
}

TEST(FlatBuffer, ViewsAreSlicesOfOneBlock) {
  FlatBuffer buf(cpuDevice(), Type::float32, 10);
  Tensor all = buf.all();
  EXPECT_EQ(all.size(), 10u);
  for(float v : kernels::toHost(all))
    EXPECT_EQ(v, 0.f);  // zero-filled
  Tensor shard = buf.view(4, Shape({2, 3}));
  EXPECT_EQ(shard.f32(), all.f32() + 4);
  kernels::fill(shard, 2.f);
  std::vector<float> host = kernels::toHost(all);
  EXPECT_EQ(host[3], 0.f);
  EXPECT_EQ(host[4], 2.f);
  EXPECT_EQ(host[9], 2.f);
  EXPECT_THROW(buf.view(8, Shape({3})), Error);
}

TEST(Workspace, GrowsThenMergesIntoOneChunk) {
  Workspace ws(cpuDevice(), 1024);
  Tensor a = ws.allocate(Shape({100}));    // 400 bytes -> 512 aligned
  Tensor b = ws.allocate(Shape({1000}));   // overflows the first chunk
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % 256, 0u);
  EXPECT_GE(ws.capacity(), 1024u + 4000u);
  size_t peak = ws.peak();
  ws.reset();
  EXPECT_EQ(ws.used(), 0u);
  EXPECT_GE(ws.capacity(), peak);
  // the same batch now fits in one chunk: consecutive addresses
  Tensor a2 = ws.allocate(Shape({100}));
  Tensor b2 = ws.allocate(Shape({1000}));
  EXPECT_EQ(static_cast<char*>(b2.data), static_cast<char*>(a2.data) + 512);
}

// As Marian's, --workspace plans a batch's memory and does not cap it: a batch that needs more
// gets it (a run does not end midway on a long batch), and the next batch has it in one chunk.
TEST(Workspace, ABatchPastTheLimitGetsItsMemory) {
  Workspace ws(cpuDevice(), 1 << 20, 1 << 20);  // 1 MB, like --workspace 1
  Tensor a = ws.allocate(Shape({200000}));
  Tensor b = ws.allocate(Shape({200000}));  // 1.6 MB in all
  EXPECT_GE(ws.peak(), 1600000u);
  std::fill(b.f32(), b.f32() + 200000, 1.f);  // its own memory, beside a's
  EXPECT_NE(a.data, b.data);
  ws.reset();
  EXPECT_GE(ws.capacity(), ws.peak());
}

TEST(Tensor, TypeAndViewChecks) {
  FlatBuffer buf(cpuDevice(), Type::float32, 6);
  Tensor t = buf.view(0, Shape({2, 3}));
  EXPECT_THROW(t.i32(), Error);
  EXPECT_EQ(t.reshaped(Shape({3, 2})).shape, Shape({3, 2}));
  EXPECT_THROW(t.reshaped(Shape({4})), Error);
  EXPECT_EQ(t.slice(2, 3).f32(), t.f32() + 2);
}

TEST(Backend, GpuDeviceWithoutAGpuIsAClearError) {
  // Without the GPU backend, or with it but no GPU, asking for gpu0 names the problem.
  try {
    FlatBuffer buf(gpuDevice(0), Type::float32, 4);
    GTEST_SKIP() << "a GPU is present";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find(gpuBackendCompiled() ? "GPU 0" : "gpu0"), std::string::npos)
        << e.what();
  }
}

// The features the backend chooses by are the kernel's flags for this CPU (/proc/cpuinfo), and
// bfloat16 products are refused exactly where neither bfloat16 instruction set is there.
TEST(CpuFeatures, AgreeWithTheKernelsFlags) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while(std::getline(cpuinfo, line))
    if(line.rfind("flags", 0) == 0) {
      flags = line.substr(line.find(':') + 1) + " ";
      break;
    }
  if(flags.empty())
    GTEST_SKIP() << "no /proc/cpuinfo flags";
  auto has = [&](const char* flag) { return flags.find(" " + std::string(flag) + " ") != std::string::npos; };
  const cpu::CpuFeatures& f = cpu::cpuFeatures();
  EXPECT_EQ(f.avx512, has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl"));
  EXPECT_EQ(f.avx2, has("avx2") && has("fma"));
  EXPECT_EQ(f.avx512Bf16, has("avx512_bf16"));
  EXPECT_EQ(f.amxBf16, has("amx_bf16"));
  EXPECT_EQ(cpuLacksProductType(ProductType::bfloat16).empty(), f.avx512Bf16 || f.amxBf16);
}

// Only OpenBLAS's fallback for a CPU model it does not know (Prescott's SSE3 kernels) is replaced,
// by the best kernels the CPU can run, and never a core type the user chose.
TEST(BlasKernels, OnlyTheFallbackForAnUnknownCpuIsReplaced) {
  cpu::CpuFeatures avx512{true, true}, avx2{false, true}, sse{false, false};
  EXPECT_EQ(cpu::blasKernelsFor("prescott", avx512, false), "SkylakeX");
  EXPECT_EQ(cpu::blasKernelsFor("prescott", avx2, false), "Haswell");
  EXPECT_EQ(cpu::blasKernelsFor("prescott", sse, false), "");
  EXPECT_EQ(cpu::blasKernelsFor("prescott", avx512, true), "");  // OPENBLAS_CORETYPE=Prescott stays
  EXPECT_EQ(cpu::blasKernelsFor("zen", avx512, false), "");
  EXPECT_EQ(cpu::blasKernelsFor("haswell", avx512, false), "");
}

// On this machine's OpenBLAS: after the switch (after a product already ran, as in a test binary)
// an AVX2 CPU runs no Prescott kernel, and products still agree with a plain sum.
TEST(BlasKernels, ThisProcessRunsNoPrescottKernelsOnAnAvx2Cpu) {
  if(std::getenv("OPENBLAS_CORETYPE"))
    GTEST_SKIP() << "OPENBLAS_CORETYPE is set: the user's choice";
  std::string before = cpu::blasKernels();
  std::string said = cpu::useFastestBlasKernels();
  if(cpu::cpuFeatures().avx2) {
    EXPECT_NE(cpu::blasKernels(), "prescott") << "OpenBLAS chose " << before;
  }
  EXPECT_EQ(said.empty(), cpu::blasKernels() == before) << said;
  EXPECT_EQ(cpu::useFastestBlasKernels(), "");  // once
  const int m = 37, k = 29, n = 41;
  FlatBuffer buf(cpuDevice(), Type::float32, m * k + k * n + m * n);
  float* a = buf.view(0, Shape({m, k})).f32();
  float* b = buf.view(m * k, Shape({k, n})).f32();
  for(int i = 0; i < m * k + k * n; ++i)
    a[i] = float((i * 7919) % 13) / 13.f - 0.5f;
  kernels::gemm(buf.view(m * k + k * n, Shape({m, n})), buf.view(0, Shape({m, k})), buf.view(m * k, Shape({k, n})),
                false, false, 1.f, 0.f);
  const float* c = buf.view(m * k + k * n, Shape({m, n})).f32();
  for(int i = 0; i < m; ++i)
    for(int j = 0; j < n; ++j) {
      double want = 0;
      for(int l = 0; l < k; ++l)
        want += double(a[i * k + l]) * b[l * n + j];
      ASSERT_NEAR(c[i * n + j], want, 1e-5) << i << "," << j;
    }
}

}  // namespace
}  // namespace marian
