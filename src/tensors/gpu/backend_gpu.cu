// The GPU side of the backend contract: device memory, copies and one stream per device, plus
// the per-device context (stream, cuBLAS handle, scratch, error slot) that the kernels use.
#include <map>
#include <mutex>
#include <string>

#include "tensors/backend.h"
#include "tensors/gpu/cublas_library.h"
#include "tensors/gpu/gpu_context.h"
#include "tensors/kernel_checks.h"

namespace marian {
int cudaComputeCapability(int id);  // below, outside namespace gpu (backend.cpp's)
namespace gpu {

namespace {
// `bytes` of device memory on the current GPU `id`; out of memory is an error that says how much
// was asked for and was free, and leaves no CUDA error behind for the next launch check to blame
// on its kernel.
void* deviceMemory(int id, size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t rc = cudaMalloc(&p, bytes);
  if(rc != cudaSuccess) {
    cudaGetLastError();
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    ABORT("Out of GPU memory on gpu{}: {} bytes of {} requested, {} of {} bytes free ({})", id, bytes, what, free,
          total, cudaGetErrorString(rc));
  }
  return p;
}
}  // namespace

void* Context::scratch(size_t bytes, int slot) {
  if(bytes > scratchBytes_[slot]) {
    size_t grown = std::max(bytes, scratchBytes_[slot] * 3 / 2);
    if(scratch_[slot]) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // pending kernels may still use the old buffer
      CUDA_CHECK(cudaFree(scratch_[slot]));
      scratch_[slot] = nullptr;  // an allocation that fails below leaves no freed buffer behind
      scratchBytes_[slot] = 0;
    }
    scratch_[slot] = deviceMemory(id, grown, "scratch");
    scratchBytes_[slot] = grown;
  }
  return scratch_[slot];
}

void Context::synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceError e;
  CUDA_CHECK(cudaMemcpy(&e, deviceError, sizeof e, cudaMemcpyDeviceToHost));
  if(e.code != kNoError) {
    CUDA_CHECK(cudaMemsetAsync(deviceError, 0, sizeof e, stream));
    if(e.code == kRowIndexOutOfRange)
      checks::rowInRange(e.value, size_t(e.limit));
    if(e.code == kLabelOutOfRange)
      checks::labelInRange(e.value, size_t(e.limit));
    ABORT("GPU kernel error {} on gpu{}", e.code, id);
  }
}

namespace {

// The device current on this thread, so that a kernel launch costs no cudaSetDevice call
// when the thread stays on one GPU (the usual case: one thread per device).
thread_local int currentDevice = -1;
void useDevice(int id) {
  if(currentDevice != id) {
    CUDA_CHECK(cudaSetDevice(id));
    currentDevice = id;
  }
}

// Which of a GPU's streams this thread's work goes to (setDeviceLane).
thread_local int currentLane = 0;

std::mutex contextsMutex;
std::map<int, Context*> contexts;  // lane contexts of each GPU, owned by the backends (alive until exit)
bool tf32Products = false;         // setTf32, under contextsMutex

// Every lane's cuBLAS handle of one GPU to TF32 or, with CUBLAS_DEFAULT_MATH, FP32 products (no
// TF32 unless asked for). Under contextsMutex.
void applyProductMath(Context* lanes) {
  for(int lane = 0; lane < kLanes; ++lane)
    CUBLAS_CHECK(cublasLibrary().setMathMode(lanes[lane].cublas,
                                             tf32Products ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

class GpuBackend : public Backend {
public:
  explicit GpuBackend(int id) : id_(id) {
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    ABORT_IF(rc != cudaSuccess, "GPU {} requested, but CUDA finds no usable GPU: {}", id,
             cudaGetErrorString(rc));
    ABORT_IF(id < 0 || id >= count, "GPU {} requested but {} GPU(s) are visible", id, count);
    int capability = cudaComputeCapability(id);
    ABORT_IF(capability != 0 && capability < MARIAN_CUDA_OLDEST_ARCH,
             "GPU {} has compute capability {}.{}, but this build's kernels run on {}.{} and later "
             "(CMAKE_CUDA_ARCHITECTURES in CMakeLists.txt)",
             id, capability / 10, capability % 10, MARIAN_CUDA_OLDEST_ARCH / 10, MARIAN_CUDA_OLDEST_ARCH % 10);
    useDevice(id);
    for(Context& c : lanes_) {
      c.id = id;
      CUDA_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
      CUBLAS_CHECK(cublasLibrary().create(&c.cublas));
      CUBLAS_CHECK(cublasLibrary().setStream(c.cublas, c.stream));
      CUDA_CHECK(cudaMalloc(&c.deviceError, sizeof(DeviceError)));
      CUDA_CHECK(cudaMemsetAsync(c.deviceError, 0, sizeof(DeviceError), c.stream));
      CUDA_CHECK(cudaStreamSynchronize(c.stream));
    }
    // Direct access between this GPU and the others this process uses, both ways (gradient
    // sums across devices); cudaMemcpyPeer copies work without it where hardware does not allow it.
    std::lock_guard<std::mutex> lock(contextsMutex);
    applyProductMath(lanes_);
    for(auto& [other, ctx] : contexts) {
      int can = 0;
      if(cudaDeviceCanAccessPeer(&can, id, other) == cudaSuccess && can) {
        cudaDeviceEnablePeerAccess(other, 0);
        useDevice(other);
        cudaDeviceEnablePeerAccess(id, 0);
        useDevice(id);
      }
    }
    cudaGetLastError();  // "already enabled" is not an error here
    contexts[id] = lanes_;
  }
  Device device() const override { return gpuDevice(id_); }

  void* allocate(size_t bytes) override {
    useDevice(id_);
    return deviceMemory(id_, bytes ? bytes : 256, "tensors");
  }
  void release(void* ptr) override {
    useDevice(id_);
    cudaFree(ptr);
  }
  void copyFromHost(void* dst, const void* src, size_t bytes) override {
    Context& c = lane();
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c.stream));
    CUDA_CHECK(cudaStreamSynchronize(c.stream));  // the host buffer may go away after return
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    Context& c = lane();
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c.stream));
    c.synchronize();
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, lane().stream));
  }
  void zero(void* dst, size_t bytes) override { CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, lane().stream)); }
  void synchronize() override { lane().synchronize(); }

  struct GpuEvent : DeviceEvent {
    cudaEvent_t event = nullptr;
    ~GpuEvent() override { cudaEventDestroy(event); }
  };
  std::unique_ptr<DeviceEvent> createEvent() override {
    useDevice(id_);
    auto e = std::make_unique<GpuEvent>();
    CUDA_CHECK(cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming));
    return e;
  }
  void record(DeviceEvent* event) override {
    CUDA_CHECK(cudaEventRecord(static_cast<GpuEvent*>(event)->event, lane().stream));
  }
  void wait(DeviceEvent* event) override {
    CUDA_CHECK(cudaStreamWaitEvent(lane().stream, static_cast<GpuEvent*>(event)->event, 0));
  }

private:
  Context& lane() {
    useDevice(id_);
    return lanes_[currentLane];
  }

  int id_;
  Context lanes_[kLanes];
};

}  // namespace

void setLane(int lane) {
  ABORT_IF(lane < 0 || lane >= kLanes, "GPU stream lane {} does not exist (0: compute, 1: communication)", lane);
  currentLane = lane;
}

void setTf32(bool on) {
  std::lock_guard<std::mutex> lock(contextsMutex);
  tf32Products = on;
  for(auto& [id, lanes] : contexts)
    applyProductMath(lanes);
}

Context& context(int id) {
  constexpr int kCached = 64;
  thread_local Context* cached[kCached] = {};  // lane 0 of each GPU
  Context* c = id >= 0 && id < kCached ? cached[id] : nullptr;
  if(!c) {
    backendFor(gpuDevice(id));  // creates the contexts on first use
    std::lock_guard<std::mutex> lock(contextsMutex);
    c = contexts.at(id);
    if(id >= 0 && id < kCached)
      cached[id] = c;
  }
  useDevice(id);
  return c[currentLane];
}

}  // namespace gpu

int cudaDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::string cudaBusId(int id) {
  char bus[32] = "";
  if(cudaDeviceGetPCIBusId(bus, int(sizeof(bus)), id) != cudaSuccess) {
    cudaGetLastError();  // (not sticky: clear it)
    return "";
  }
  return bus;
}

int cudaComputeCapability(int id) {
  int major = 0, minor = 0;
  if(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id) != cudaSuccess ||
     cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id) != cudaSuccess) {
    cudaGetLastError();  // (not sticky: clear it)
    return 0;
  }
  return major * 10 + minor;
}

std::unique_ptr<Backend> makeGpuBackend(int id) { return std::make_unique<gpu::GpuBackend>(id); }

}  // namespace marian
