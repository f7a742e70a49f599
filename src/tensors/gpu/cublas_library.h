#pragma once
// defines: gpu::cublasLibrary — the cuBLAS functions the GPU backend calls, loaded with dlopen
// when the first GPU backend starts. Linking cuBLAS costs every process about 215 MB of resident
// memory at start (its libraries' initialisation touches their pages), CPU-only runs included;
// loaded on first use, CPU runs never map it.
#include <cublas_v2.h>

namespace marian {
namespace gpu {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) setStream;
  decltype(&cublasSetMathMode) setMathMode;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemmStridedBatched;
};

// Loads libcublas.so.<major of the headers> once (beside libcudart if not on the search path);
// an error names the library and what dlopen or dlsym said.
const CublasLibrary& cublasLibrary();

}  // namespace gpu
}  // namespace marian
