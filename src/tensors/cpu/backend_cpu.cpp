#include <malloc.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "tensors/backend.h"
#include "tensors/cpu/kernel_threads.h"

namespace marian {
namespace {

class CpuBackend : public Backend {
public:
  explicit CpuBackend(int id) : id_(id) {
    // Blocks from 4 MiB on are mapped and unmapped on their own, always: glibc would otherwise
    // raise its threshold to the size of a freed mapped block (up to 32 MiB) and serve the next
    // ones from its heap, which keeps freed workspaces and decoder states resident.
    static const bool fixed = mallopt(M_MMAP_THRESHOLD, 4 << 20) == 1;
    (void)fixed;
  }
  Device device() const override { return cpuDevice(id_); }

  void* allocate(size_t bytes) override {
    // 256-byte alignment, as cudaMalloc gives: arenas can then align sub-allocations the same
    // way on every device. Large blocks (workspaces, parameter buffers) get 2 MiB huge pages:
    // a training step streams hundreds of MB of activations, and 4 KiB pages make that
    // TLB-bound (measured: element-wise backward ops ran 4-8x slower than on warm small arrays).
    const size_t huge = size_t(2) << 20;
    size_t align = bytes >= 2 * huge ? huge : 256;
    size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded ? rounded : align);
    ABORT_IF(!p, "Out of host memory allocating {} bytes on {}", bytes, device().toString());
    if(align == huge)
      madvise(p, rounded, MADV_HUGEPAGE);
    return p;
  }
  void release(void* ptr) override { std::free(ptr); }
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
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(int id) { return std::make_unique<CpuBackend>(id); }

}  // namespace marian
