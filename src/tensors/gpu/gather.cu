// Row gather (embedding lookup) and its gradient, scatter-add into the table (atomicAdd: rows
// that repeat in a batch are summed in no fixed order, so the last bits may differ run to run).
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

__global__ void gatherKernel(float* y, const float* table, const int* idx, size_t count,
                             size_t rows, size_t n, DeviceError* error) {
  GRID_STRIDE(e, count * n) {
    size_t i = e / n, j = e % n;
    int r = idx[i];
    if(r < 0 || size_t(r) >= rows) {
      reportError(error, kRowIndexOutOfRange, r, int(rows));
      y[e] = 0.f;
    } else {
      y[e] = table[size_t(r) * n + j];
    }
  }
}

__global__ void scatterAddKernel(float* dtable, const int* idx, const float* dy, size_t count,
                                 size_t rows, size_t n, DeviceError* error) {
  GRID_STRIDE(e, count * n) {
    size_t i = e / n, j = e % n;
    int r = idx[i];
    if(r < 0 || size_t(r) >= rows)
      reportError(error, kRowIndexOutOfRange, r, int(rows));
    else
      atomicAdd(dtable + size_t(r) * n + j, dy[e]);
  }
}

}  // namespace

void gatherRows(Tensor y, Tensor table, Tensor indices) {
  size_t rows = table.shape.rows(), n = size_t(table.shape.back());
  ABORT_IF(y.size() != indices.size() * n, "gatherRows: {} rows of {} into {}", indices.size(),
           table.shape.toString(), y.shape.toString());
  const Context& c = context(y);
  gatherKernel<<<blocksFor(y.size()), kThreads, 0, c.stream>>>(y.f32(), table.f32(), indices.i32(),
                                                              indices.size(), rows, n, c.deviceError);
  checkLaunch();
}

void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy) {
  size_t rows = dtable.shape.rows(), n = size_t(dtable.shape.back());
  const Context& c = context(dtable);
  scatterAddKernel<<<blocksFor(indices.size() * n), kThreads, 0, c.stream>>>(
      dtable.f32(), indices.i32(), dy.f32(), indices.size(), rows, n, c.deviceError);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
