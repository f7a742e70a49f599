#include "comm/allreduce/row_allgather.h"

#include "comm/allreduce/sparse_ops.h"
#include "common/byte_record.h"

namespace marian {

namespace {

class RowAllgather : public Allreduce {
public:
  RowAllgather(Transport& t, size_t width) : Allreduce(t), width_(width) {
    ABORT_IF(width == 0, "row-allgather: rows of width 0");
  }
  std::string name() const override { return "row-allgather"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    AllreduceResult result;
    for(const std::vector<char>& piece : ringAllgather(pack(local, n), 0))
      result.sparse = mergeSparse(result.sparse, unpack(piece, n));
    return result;
  }

private:
  size_t rowEnd(uint32_t row, size_t n) const { return std::min(n, (size_t(row) + 1) * width_); }

  // [rows: uint32][their indices: uint32 each, ascending][their values: width floats each, zeros
  // where `v` has no pair; the last row of the vector as long as it is]
  std::vector<char> pack(const SparseVector& v, size_t n) const {
    std::vector<uint32_t> rows;
    for(uint32_t i : v.indices)
      if(rows.empty() || rows.back() != i / width_)
        rows.push_back(uint32_t(i / width_));
    std::vector<size_t> startOf(rows.size());  // where each row's values begin in the message
    size_t values = 0;
    for(size_t j = 0; j < rows.size(); ++j) {
      startOf[j] = values;
      values += rowEnd(rows[j], n) - size_t(rows[j]) * width_;
    }
    std::vector<float> filled(values, 0.f);
    size_t j = 0;
    for(size_t e = 0; e < v.size(); ++e) {
      while(rows[j] != v.indices[e] / width_)
        ++j;
      filled[startOf[j] + v.indices[e] - size_t(rows[j]) * width_] = v.values[e];
    }
    ByteWriter w;
    w.put(uint32_t(rows.size()));
    w.putArray(rows);
    w.putArray(filled);
    return w.take();
  }

  // The pairs of a message whose values are not 0 (the zeros a row was filled with add nothing).
  SparseVector unpack(const std::vector<char>& bytes, size_t n) const {
    ByteReader r(bytes, "row-allgather message");
    uint32_t count = r.get<uint32_t>();
    std::vector<uint32_t> rows = r.getArray<uint32_t>(count);
    size_t values = 0;
    for(size_t j = 0; j < rows.size(); ++j) {
      ABORT_IF(size_t(rows[j]) * width_ >= n || (j > 0 && rows[j] <= rows[j - 1]),
               "{}: row {} is outside the vector of {} rows of {} or out of order", name(), rows[j],
               (n + width_ - 1) / width_, width_);
      values += rowEnd(rows[j], n) - size_t(rows[j]) * width_;
    }
    ABORT_IF(r.left() != values * sizeof(float), "{}: a message of {} bytes for {} rows holding {} values", name(),
             bytes.size(), count, values);
    std::vector<float> filled = r.getArray<float>(values);
    SparseVector v;
    size_t at = 0;
    for(uint32_t row : rows)
      for(size_t i = size_t(row) * width_; i < rowEnd(row, n); ++i, ++at)
        if(filled[at] != 0.f) {
          v.indices.push_back(uint32_t(i));
          v.values.push_back(filled[at]);
        }
    return v;
  }

  size_t width_;
};

}  // namespace

std::unique_ptr<Allreduce> createRowAllgather(Transport& t, size_t width) {
  return std::make_unique<RowAllgather>(t, width);
}

}  // namespace marian
