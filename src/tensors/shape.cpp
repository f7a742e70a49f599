#include "tensors/shape.h"

#include "common/error.h"

namespace marian {

Shape::Shape(std::initializer_list<int> dims) : Shape(std::vector<int>(dims)) {}

Shape::Shape(const std::vector<int>& dims) {
  ABORT_IF(dims.size() > size_t(kMaxRank), "Shape of rank {} exceeds the maximum rank {}",
           dims.size(), kMaxRank);
  rank_ = int(dims.size());
  for(int i = 0; i < rank_; ++i) {
    ABORT_IF(dims[i] < 0, "Negative dimension {} in shape", dims[i]);
    dims_[i] = dims[i];
  }
}

int Shape::axis(int a) const {
  int r = a < 0 ? a + rank_ : a;
  ABORT_IF(r < 0 || r >= rank_, "Axis {} out of range for shape {}", a, toString());
  return r;
}

size_t Shape::elements() const {
  size_t n = 1;
  for(int i = 0; i < rank_; ++i)
    n *= size_t(dims_[i]);
  return n;
}

size_t Shape::leading(int trailingAxes) const {
  size_t n = 1;
  for(int i = 0; i + trailingAxes < rank_; ++i)
    n *= size_t(dims_[i]);
  return n;
}

Shape Shape::with(int a, int value) const {
  Shape s = *this;
  s[a] = value;
  return s;
}

std::array<int, Shape::kMaxRank> Shape::padded() const {
  std::array<int, kMaxRank> p;
  p.fill(1);
  for(int i = 0; i < rank_; ++i)
    p[kMaxRank - rank_ + i] = dims_[i];
  return p;
}

bool Shape::operator==(const Shape& o) const {
  if(rank_ != o.rank_)
    return false;
  for(int i = 0; i < rank_; ++i)
    if(dims_[i] != o.dims_[i])
      return false;
  return true;
}

std::string Shape::toString() const {
  std::string s = "[";
  for(int i = 0; i < rank_; ++i)
    s += (i ? "x" : "") + std::to_string(dims_[i]);
  return s + "]";
}

Shape Shape::broadcast(const Shape& a, const Shape& b) {
  int rank = std::max(a.rank_, b.rank_);
  std::vector<int> out(rank);
  auto pa = a.padded(), pb = b.padded();
  for(int i = 0; i < rank; ++i) {
    int da = pa[kMaxRank - rank + i], db = pb[kMaxRank - rank + i];
    ABORT_IF(da != db && da != 1 && db != 1, "Shapes {} and {} cannot be broadcast together",
             a.toString(), b.toString());
    out[i] = std::max(da, db);
    if(da == 0 || db == 0)
      out[i] = 0;
  }
  return Shape(out);
}

std::array<size_t, Shape::kMaxRank> broadcastStrides(const Shape& in, const Shape& out) {
  auto pin = in.padded(), pout = out.padded();
  std::array<size_t, Shape::kMaxRank> strides{};
  size_t stride = 1;
  for(int i = Shape::kMaxRank - 1; i >= 0; --i) {
    ABORT_IF(pin[i] != pout[i] && pin[i] != 1, "Shape {} does not broadcast to {}", in.toString(),
             out.toString());
    strides[i] = pin[i] == 1 ? 0 : stride;
    stride *= size_t(pin[i]);
  }
  return strides;
}

}  // namespace marian
