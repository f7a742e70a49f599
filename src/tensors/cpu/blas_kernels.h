#pragma once
// defines: cpu::blasKernelsFor, cpu::useFastestBlasKernels — which of OpenBLAS's kernels the
// products run on. A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels by the CPU's model number
// and falls back to Prescott's (SSE3) for a model it does not know: Debian's 0.3.21 does so on
// Intel Xeons newer than itself (model 207), where Prescott's sgemm is a tenth of the AVX-512
// kernel's speed and training 3.6 times slower (docs/results.md, "OpenBLAS on a CPU newer than it").
#include <string>

#include "tensors/cpu/cpu_features.h"

namespace marian {
namespace cpu {

// The OpenBLAS core type (OPENBLAS_CORETYPE's spelling) to switch to from `chosen`, the core
// OpenBLAS picked (blasKernels()), or "" to keep it: only its fallback for an unknown
// model is replaced, and never a core the user set with OPENBLAS_CORETYPE.
std::string blasKernelsFor(const std::string& chosen, const CpuFeatures& cpu, bool userSetCoreType);

// Applies blasKernelsFor to this process's OpenBLAS, before any product runs (OpenBLAS re-reads
// its kernel table; nothing else changes). Returns a line saying what it changed, or "" when it
// kept OpenBLAS's choice or the BLAS cannot switch (a single-target build, not OpenBLAS).
std::string useFastestBlasKernels();
// The kernels OpenBLAS uses now (its core name in lower case, e.g. "skylakex")
std::string blasKernels();

}  // namespace cpu
}  // namespace marian
