#pragma once
// defines: marian::Tensor — a view (pointer, shape, type, device). It never owns memory; arenas do.
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "tensors/device.h"
#include "tensors/shape.h"
#include "tensors/type.h"

namespace marian {

struct Tensor {
  void* data = nullptr;
  Shape shape;
  Type type = Type::float32;
  Device device;

  Tensor() = default;
  Tensor(void* data, Shape shape, Type type, Device device)
      : data(data), shape(shape), type(type), device(device) {}

  bool empty() const { return data == nullptr; }
  size_t size() const { return shape.elements(); }
  size_t bytes() const { return size() * sizeOf(type); }

  float* f32() const {
    ABORT_IF(type != Type::float32, "Tensor of type {} used as float32", typeName(type));
    return static_cast<float*>(data);
  }
  uint16_t* bf16() const {
    ABORT_IF(type != Type::bfloat16, "Tensor of type {} used as bfloat16", typeName(type));
    return static_cast<uint16_t*>(data);
  }
  int* i32() const {
    ABORT_IF(type != Type::int32, "Tensor of type {} used as int32", typeName(type));
    return static_cast<int*>(data);
  }

  // Same memory, another shape with the same number of elements.
  Tensor reshaped(const Shape& s) const {
    ABORT_IF(s.elements() != size(), "Cannot view {} as {}", shape.toString(), s.toString());
    return Tensor(data, s, type, device);
  }
  // A flat range [offset, offset+n) of this tensor's elements.
  Tensor slice(size_t offset, size_t n) const {
    ABORT_IF(offset + n > size(), "Slice [{}, {}) out of range for {} elements", offset, offset + n,
             size());
    return Tensor(static_cast<char*>(data) + offset * sizeOf(type), Shape({int(n)}), type, device);
  }
};

}  // namespace marian
