#pragma once
// defines: cpu::CpuFeatures, cpu::cpuFeatures — the instruction sets of this CPU that the CPU
// backend chooses by: OpenBLAS's kernel table (blas_kernels.h), the bfloat16 rounding
// (convert.cpp) and whether bfloat16 products may run at all (product_precision.h).

namespace marian {
namespace cpu {

struct CpuFeatures {
  bool avx512 = false;      // avx512f, bw, dq and vl: what OpenBLAS's SkylakeX kernels use
  bool avx2 = false;        // avx2 and fma: its Haswell kernels
  bool avx512Bf16 = false;  // vcvtneps2bf16 and vdpbf16ps (AMD Zen 4, Intel Cooper Lake and later)
  bool amxBf16 = false;     // AMX's bfloat16 tiles (Intel Sapphire Rapids and later)
};
// This CPU's, read once (all false off x86-64).
const CpuFeatures& cpuFeatures();

}  // namespace cpu
}  // namespace marian
