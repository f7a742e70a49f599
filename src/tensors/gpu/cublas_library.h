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
  // float32 operands with a compute type of CUBLAS_COMPUTE_32F_FAST_16F/_16BF: --precision's
  // float16/bfloat16 products on the tensor cores, inputs rounded inside cuBLAS
  // (written out: the headers overload both for C++ with a cudaDataType compute type)
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                           const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                           cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  cublasStatus_t (*gemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long int, const void*,
                                         cudaDataType, int, long long int, const void*, void*, cudaDataType, int,
                                         long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
};

// Loads libcublas.so.<major of the headers> once (beside libcudart if not on the search path);
// an error names the library and what dlopen or dlsym said.
const CublasLibrary& cublasLibrary();

}  // namespace gpu
}  // namespace marian
