#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "tensors/backend.h"
#include "tensors/cpu/kernel_threads.h"

namespace marian {
namespace {

class CpuBackend : public Backend {
public:
  explicit CpuBackend(int id) : id_(id) {}
  Device device() const override { return cpuDevice(id_); }

  void* allocate(size_t bytes) override {
    // kAllocationAlignment, as cudaMalloc gives: arenas can then align sub-allocations the same
    // way on every device. Large blocks (workspaces, parameter buffers) are mapped on their own,
    // 2 MiB-aligned with huge pages: a training step streams hundreds of MB of activations, and
    // 4 KiB pages make that TLB-bound (measured: element-wise backward ops ran 4-8x slower than on
    // warm small arrays); and unmapped when released, so that memory freed between updates goes
    // back to the system without touching malloc (whose threshold would rise after freeing a
    // mapped block, and then keep the libraries' large buffers, oneDNN's, in its heap).
    const size_t huge = size_t(2) << 20;
    if(bytes >= 2 * huge) {
      size_t rounded = (bytes + huge - 1) / huge * huge, span = rounded + huge;
      void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ABORT_IF(raw == MAP_FAILED, "Out of host memory allocating {} bytes on {}", bytes, device().toString());
      char* begin = static_cast<char*>(raw);
      char* p = begin + (huge - reinterpret_cast<uintptr_t>(begin) % huge) % huge;  // the aligned part
      if(p > begin)
        munmap(begin, size_t(p - begin));
      if(begin + span > p + rounded)
        munmap(p + rounded, size_t(begin + span - (p + rounded)));
      madvise(p, rounded, MADV_HUGEPAGE);
      std::lock_guard<std::mutex> lock(mutex_);
      mapped_[p] = rounded;
      return p;
    }
    void* p = std::aligned_alloc(kAllocationAlignment, alignedSize(bytes) + (bytes == 0 ? kAllocationAlignment : 0));
    ABORT_IF(!p, "Out of host memory allocating {} bytes on {}", bytes, device().toString());
    return p;
  }
  void release(void* ptr) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = mapped_.find(ptr);
      if(it != mapped_.end()) {
        munmap(ptr, it->second);
        mapped_.erase(it);
        return;
      }
    }
    std::free(ptr);
  }
  void copyFromHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copyToHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void zero(void* dst, size_t bytes) override {
    char* p = static_cast<char*>(dst);
    cpu::parallelRanges(bytes, cpu::kParallelElements * sizeof(float),
                        [&](size_t b, size_t e) { std::memset(p + b, 0, e - b); });
  }
  void synchronize() override {}

private:
  int id_;
  std::mutex mutex_;
  std::unordered_map<void*, size_t> mapped_;  // blocks mapped on their own, by their aligned start
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(int id) { return std::make_unique<CpuBackend>(id); }

}  // namespace marian
