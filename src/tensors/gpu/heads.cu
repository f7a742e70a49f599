// Attention heads of all positions from the rows of the real positions, and back (tensors/
// kernels.h): one thread per element of the heads; every element of the rows has one head
// element, so the reverse direction needs no atomics.
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"

namespace marian {
namespace gpu {

namespace {

// The offset in the rows of heads element e, or -1 for padding (-2: an invalid row number).
__device__ long long rowsOffset(size_t e, checks::HeadDims h, const int* rowOf, DeviceError* error) {
  size_t j = e % h.d, t = (e / h.d) % h.T, head = (e / (h.d * h.T)) % h.H, b = e / (h.d * h.T * h.H);
  int r = rowOf[b * h.T + t];
  if(r < -1 || (r >= 0 && size_t(r) >= h.N)) {
    reportError(error, kRowIndexOutOfRange, r, int(h.N));
    return -2;
  }
  return r < 0 ? -1 : (long long)(size_t(r) * h.H * h.d + head * h.d + j);
}

__global__ void headsFromRowsKernel(float* heads, const float* rows, const int* rowOf, checks::HeadDims h,
                                    size_t n, bool accumulate, DeviceError* error) {
  GRID_STRIDE(e, n) {
    long long from = rowsOffset(e, h, rowOf, error);
    float v = from >= 0 ? rows[from] : 0.f;
    heads[e] = accumulate ? heads[e] + v : v;
  }
}

__global__ void rowsFromHeadsKernel(float* rows, const float* heads, const int* rowOf, checks::HeadDims h,
                                    size_t n, bool accumulate, DeviceError* error) {
  GRID_STRIDE(e, n) {
    long long to = rowsOffset(e, h, rowOf, error);
    if(to >= 0)
      rows[to] = accumulate ? rows[to] + heads[e] : heads[e];
  }
}

}  // namespace

void headsFromRows(Tensor heads, Tensor rows, Tensor rowOf, bool accumulate) {
  checks::HeadDims h = checks::headDims(heads, rows, rowOf);
  const Context& c = context(heads);
  headsFromRowsKernel<<<blocksFor(heads.size()), kThreads, 0, c.stream>>>(
      heads.f32(), rows.f32(), rowOf.i32(), h, heads.size(), accumulate, c.deviceError);
  checkLaunch();
}

void rowsFromHeads(Tensor rows, Tensor heads, Tensor rowOf, bool accumulate) {
  checks::HeadDims h = checks::headDims(heads, rows, rowOf);
  const Context& c = context(rows);
  rowsFromHeadsKernel<<<blocksFor(heads.size()), kThreads, 0, c.stream>>>(
      rows.f32(), heads.f32(), rowOf.i32(), h, heads.size(), accumulate, c.deviceError);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
