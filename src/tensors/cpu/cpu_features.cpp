#include "tensors/cpu/cpu_features.h"

namespace marian {
namespace cpu {

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__)
    __builtin_cpu_init();
    f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    f.avx512Bf16 = __builtin_cpu_supports("avx512bf16");
    f.amxBf16 = __builtin_cpu_supports("amx-bf16");
#endif
    return f;
  }();
  return features;
}

}  // namespace cpu
}  // namespace marian
