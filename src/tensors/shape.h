#pragma once
// defines: marian::Shape (rank <= 4, row-major), broadcasting rules
#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace marian {

class Shape {
public:
  static constexpr int kMaxRank = 4;

  Shape() = default;
  Shape(std::initializer_list<int> dims);
  explicit Shape(const std::vector<int>& dims);

  int rank() const { return rank_; }
  // axis may be negative: -1 is the last axis
  int axis(int a) const;
  int operator[](int a) const { return dims_[axis(a)]; }
  int& operator[](int a) { return dims_[axis(a)]; }
  int back() const { return rank_ ? dims_[rank_ - 1] : 1; }

  size_t elements() const;
  // From the leading dimensions (not elements over the matrix's size), so that an empty last
  // axis still counts its rows and an empty matrix its batch.
  size_t rows() const { return leading(1); }      // all but the last axis
  size_t matrices() const { return leading(2); }  // all but the last two axes: a batch of matrices
  std::vector<int> dims() const { return std::vector<int>(dims_.begin(), dims_.begin() + rank_); }
  Shape with(int axis, int value) const;

  // Dimensions padded on the left with 1s to kMaxRank, for kernels.
  std::array<int, kMaxRank> padded() const;

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string toString() const;  // "[2x3x4]"

  // numpy broadcasting: right-aligned, each pair of dimensions equal or one of them 1.
  static Shape broadcast(const Shape& a, const Shape& b);

private:
  size_t leading(int trailingAxes) const;

  std::array<int, kMaxRank> dims_{};
  int rank_ = 0;
};

// Element strides of `in` inside the padded index space of `out`, 0 along broadcast axes.
std::array<size_t, Shape::kMaxRank> broadcastStrides(const Shape& in, const Shape& out);

}  // namespace marian
