#pragma once
// defines: marian::FlatBuffer (one contiguous block: parameters, gradients, optimizer state;
// a shard is an (offset, size) slice) and marian::Workspace (bump arena for activations).
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "tensors/tensor.h"

namespace marian {

class Backend;

// MARIAN_POISON_RELEASED=1 (the gradient checks): released workspace blocks, and gradients that
// a node overwrites instead of zeroed ones, are filled with NaN, so that reading what nobody
// wrote shows in the result.
bool poisonsUnwrittenMemory();

class FlatBuffer {
public:
  FlatBuffer(Device device, Type type, size_t elements);  // zero-filled
  ~FlatBuffer();
  FlatBuffer(const FlatBuffer&) = delete;
  FlatBuffer& operator=(const FlatBuffer&) = delete;

  size_t size() const { return elements_; }
  Device device() const { return device_; }
  Tensor all() const { return Tensor(data_, Shape({int(elements_)}), type_, device_); }
  // Elements [offset, offset + shape.elements()) seen as `shape`.
  Tensor view(size_t offset, const Shape& shape) const;

private:
  Backend& backend_;
  Device device_;
  Type type_;
  size_t elements_;
  void* data_;
};

// Activations and their gradients for one batch. Allocation bumps a pointer; reset() frees
// everything at once. A batch that overflows the current chunk gets another one (as large as all
// before it), and the next reset() merges them into one chunk with 25% headroom over the peak,
// so after the first batches allocation never touches the system allocator. A limit (Marian's
// --workspace, in MB) is what batches are planned to take: passing it is said once, not refused,
// and the merged chunk is no larger than the limit unless a batch needed more. A released block (a
// gradient that backward is done with) serves the next allocation of its size.
class Workspace {
public:
  Workspace(Device device, size_t initialBytes, size_t limitBytes = 0);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // A released block of the same size if there is one, else new bytes of the arena.
  Tensor allocate(const Shape& shape, Type type = Type::float32);
  // The tensor's block may serve a later allocate of the same size (until reset, which
  // frees everything).
  void release(Tensor t);
  // What allocate takes of the workspace for a tensor (its bytes, aligned).
  static size_t bytesFor(const Shape& shape, Type type);
  void reset();
  // Frees every chunk while the workspace is idle (its tensors are dead), so that another graph
  // (validation) or a save can use the memory; the next allocation takes one chunk of the peak's size.
  void releaseMemory();

  Device device() const { return device_; }
  size_t used() const { return used_; }
  size_t capacity() const;
  size_t peak() const { return peak_; }

private:
  struct Chunk {
    char* data;
    size_t size;
  };
  size_t mergedSize() const;
  Backend& backend_;
  Device device_;
  size_t limit_;
  std::vector<Chunk> chunks_;
  size_t offset_ = 0;  // in chunks_.back()
  size_t used_ = 0;    // bytes taken from the arena since the last reset (released ones included)
  std::unordered_map<size_t, std::vector<char*>> released_;  // blocks by size
  size_t peak_ = 0;
};

}  // namespace marian
