#include "tensors/gpu/cublas_library.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "common/error.h"

namespace marian {
namespace gpu {

namespace {

void* openCublas() {
  std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  if(void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
    return lib;
  std::string first = dlerror();
  // the directory of the CUDA runtime this process linked, where the toolkit keeps cuBLAS too
  Dl_info info{};
  if(dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) && info.dli_fname) {
    std::string path = info.dli_fname;
    std::string besideRuntime = path.substr(0, path.find_last_of('/') + 1) + name;
    if(void* lib = dlopen(besideRuntime.c_str(), RTLD_NOW | RTLD_LOCAL))
      return lib;
  }
  ABORT("The GPU backend needs {} (cuBLAS of the CUDA toolkit it was built with), which could not be loaded: {}",
        name, first);
}

template <class F>
F symbol(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  ABORT_IF(!f, "{} not found in libcublas: {}", name, dlerror());
  return reinterpret_cast<F>(f);
}

CublasLibrary load() {
  void* lib = openCublas();
  CublasLibrary c;
  c.create = symbol<decltype(c.create)>(lib, "cublasCreate_v2");
  c.setStream = symbol<decltype(c.setStream)>(lib, "cublasSetStream_v2");
  c.setMathMode = symbol<decltype(c.setMathMode)>(lib, "cublasSetMathMode");
  c.sgemm = symbol<decltype(c.sgemm)>(lib, "cublasSgemm_v2");
  c.sgemmStridedBatched = symbol<decltype(c.sgemmStridedBatched)>(lib, "cublasSgemmStridedBatched");
  c.gemmEx = symbol<decltype(c.gemmEx)>(lib, "cublasGemmEx");
  c.gemmStridedBatchedEx = symbol<decltype(c.gemmStridedBatchedEx)>(lib, "cublasGemmStridedBatchedEx");
  return c;
}

}  // namespace

const CublasLibrary& cublasLibrary() {
  static const CublasLibrary library = load();  // thread-safe once
  return library;
}

}  // namespace gpu
}  // namespace marian
