#include "tensors/arena.h"

#include <atomic>
#include <cstdlib>
#include <limits>

#include "common/logging.h"

#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

FlatBuffer::FlatBuffer(Device device, Type type, size_t elements)
    : backend_(backendFor(device)), device_(device), type_(type), elements_(elements) {
  data_ = backend_.allocate(elements * sizeOf(type));
  backend_.zero(data_, elements * sizeOf(type));
}

FlatBuffer::~FlatBuffer() { backend_.release(data_); }

Tensor FlatBuffer::view(size_t offset, const Shape& shape) const {
  ABORT_IF(offset + shape.elements() > elements_, "View [{}, {}) out of range for a buffer of {}",
           offset, offset + shape.elements(), elements_);
  return Tensor(static_cast<char*>(data_) + offset * sizeOf(type_), shape, type_, device_);
}


Workspace::Workspace(Device device, size_t initialBytes, size_t limitBytes)
    : backend_(backendFor(device)), device_(device), limit_(limitBytes) {
  size_t bytes = alignedSize(std::max<size_t>(initialBytes, kAllocationAlignment));
  chunks_.push_back({static_cast<char*>(backend_.allocate(bytes)), bytes});
}

Workspace::~Workspace() {
  for(Chunk& c : chunks_)
    backend_.release(c.data);
}

size_t Workspace::capacity() const {
  size_t total = 0;
  for(const Chunk& c : chunks_)
    total += c.size;
  return total;
}

size_t Workspace::bytesFor(const Shape& shape, Type type) {
  return alignedSize(std::max<size_t>(shape.elements() * sizeOf(type), 1));
}

Tensor Workspace::allocate(const Shape& shape, Type type) {
  size_t bytes = bytesFor(shape, type);
  auto reuse = released_.find(bytes);
  if(reuse != released_.end() && !reuse->second.empty()) {
    char* p = reuse->second.back();
    reuse->second.pop_back();
    return Tensor(p, shape, type, device_);
  }
  // As in Marian, --workspace is what a batch is planned to take, not a cap: a batch that needs
  // more (long sentences in a fixed --mini-batch, a long input to the decoder) takes it, said
  // once a process, rather than ending a run midway.
  static std::atomic<bool> saidPastLimit{false};
  if(limit_ && used_ + bytes > limit_ && !saidPastLimit.exchange(true))
    LOG(warn, "[memory] A batch on {} needs more than the {} MB of --workspace (at least {} MB): the workspace grows "
              "past it (as Marian's); --mini-batch-fit sizes batches to it",
        device_.toString(), limit_ >> 20, (used_ + bytes + (1 << 20) - 1) >> 20);
  if(chunks_.empty() || offset_ + bytes > chunks_.back().size) {
    // geometric growth: a batch that needs much more than the first chunk takes few chunks;
    // after releaseMemory, one chunk as reset() would make it
    size_t size = std::max(bytes, chunks_.empty() ? mergedSize() : capacity());
    chunks_.push_back({static_cast<char*>(backend_.allocate(size)), size});
    offset_ = 0;
  }
  char* p = chunks_.back().data + offset_;
  offset_ += bytes;
  used_ += bytes;
  peak_ = std::max(peak_, used_);
  return Tensor(p, shape, type, device_);
}

bool poisonsUnwrittenMemory() {
  static const bool poison = std::getenv("MARIAN_POISON_RELEASED") != nullptr;
  return poison;
}

void Workspace::release(Tensor t) {
  if(poisonsUnwrittenMemory() && t.type == Type::float32)
    kernels::fill(t, std::numeric_limits<float>::quiet_NaN());
  released_[bytesFor(t.shape, t.type)].push_back(static_cast<char*>(t.data));
}

size_t Workspace::mergedSize() const {
  // 25% headroom over the peak: batches vary in length, and every new block costs page faults
  size_t total = alignedSize(std::max<size_t>(peak_ + peak_ / 4, kAllocationAlignment));
  if(limit_)
    total = std::min(total, std::max(alignedSize(limit_), alignedSize(peak_)));
  return total;
}

void Workspace::reset() {
  released_.clear();
  if(chunks_.size() > 1) {
    size_t total = mergedSize();
    for(Chunk& c : chunks_)
      backend_.release(c.data);
    chunks_.clear();
    chunks_.push_back({static_cast<char*>(backend_.allocate(total)), total});
  }
  offset_ = 0;
  used_ = 0;
}

void Workspace::releaseMemory() {
  released_.clear();
  for(Chunk& c : chunks_)
    backend_.release(c.data);
  chunks_.clear();
  offset_ = 0;
  used_ = 0;
}

}  // namespace marian
