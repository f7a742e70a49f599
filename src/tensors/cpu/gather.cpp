// Row gather (embedding lookup) and its gradient, scatter-add into the table.
#include <cstring>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/kernel_checks.h"

namespace marian {
namespace cpu {

void gatherRows(Tensor y, Tensor table, Tensor indices) {
  size_t rows = table.shape.rows(), n = size_t(table.shape.back());
  ABORT_IF(y.size() != indices.size() * n, "gatherRows: {} rows of {} into {}", indices.size(),
           table.shape.toString(), y.shape.toString());
  const int* idx = indices.i32();
  parallelRows(indices.size(), n, [&](size_t i0, size_t i1) {
    for(size_t i = i0; i < i1; ++i) {
      checks::rowInRange(idx[i], rows);
      std::memcpy(y.f32() + i * n, table.f32() + size_t(idx[i]) * n, n * sizeof(float));
    }
  });
}

void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy) {
  size_t rows = dtable.shape.rows(), n = size_t(dtable.shape.back());
  const int* idx = indices.i32();
  for(size_t i = 0; i < indices.size(); ++i) {
    checks::rowInRange(idx[i], rows);
    float* dst = dtable.f32() + size_t(idx[i]) * n;
    const float* src = dy.f32() + i * n;
    for(size_t j = 0; j < n; ++j)
      dst[j] += src[j];
  }
}

}  // namespace cpu
}  // namespace marian
