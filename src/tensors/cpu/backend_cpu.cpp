#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "tensors/backend.h"

namespace marian {
namespace {

class CpuBackend : public Backend {
public:
  explicit CpuBackend(int id) : id_(id) {}
  Device device() const override { return cpuDevice(id_); }

  void* allocate(size_t bytes) override {
    // 256-byte alignment, as cudaMalloc gives: arenas can then align sub-allocations the same
    // way on every device.
    size_t rounded = (bytes + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded ? rounded : 256);
    ABORT_IF(!p, "Out of host memory allocating {} bytes on {}", bytes, device().toString());
    return p;
  }
  void release(void* ptr) override { std::free(ptr); }
  void copyFromHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copyToHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void zero(void* dst, size_t bytes) override { std::memset(dst, 0, bytes); }
  void synchronize() override {}

private:
  int id_;
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(int id) { return std::make_unique<CpuBackend>(id); }

}  // namespace marian
