// OpenBLAS's kernel choice, mended for CPUs it does not know (blas_kernels.h).
#include "tensors/cpu/blas_kernels.h"

#include <cblas.h>

#include <cctype>
#include <cstdlib>

extern "C" {
// OpenBLAS's DYNAMIC_ARCH entry points (driver/others/dynamic.c): init picks the kernel table
// (OPENBLAS_CORETYPE first), quit forgets it. Weak: absent from a single-target OpenBLAS.
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace marian {
namespace cpu {

std::string blasKernelsFor(const std::string& chosen, const CpuFeatures& cpu, bool userSetCoreType) {
  if(userSetCoreType || chosen != "prescott")
    return "";
  if(cpu.avx512)
    return "SkylakeX";
  if(cpu.avx2)
    return "Haswell";
  return "";
}

std::string blasKernels() {  // (lower case: a DYNAMIC_ARCH build says "Prescott", a single-target one "prescott")
  const char* name = openblas_get_corename();
  std::string lower = name ? name : "";
  for(char& c : lower)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string useFastestBlasKernels() {
  std::string chosen = blasKernels();
  std::string better = blasKernelsFor(chosen, cpuFeatures(), std::getenv("OPENBLAS_CORETYPE") != nullptr);
  if(better.empty() || !gotoblas_dynamic_init || !gotoblas_dynamic_quit)
    return "";
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");  // (what the user set is left alone above; nothing here is theirs)
  return "OpenBLAS does not know this CPU and chose its Prescott (SSE3) kernels: now " + blasKernels() +
         ", as the CPU has " + (better == "SkylakeX" ? "AVX-512" : "AVX2 and FMA") +
         " (OPENBLAS_CORETYPE chooses others)";
}

}  // namespace cpu
}  // namespace marian
