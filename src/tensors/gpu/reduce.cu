// Sum, mean and max along one axis on the GPU. A tensor is seen as [outer, n, inner]: with
// inner == 1 one block reduces a row; otherwise blocks of 32 columns x 8 row-lanes walk down n,
// so reads are coalesced across the columns (bias gradients: [tokens, dim] -> [dim]).
#include "tensors/axis_view.h"
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"

namespace marian {
namespace gpu {

namespace {

template <class Op>
__global__ void reduceRows(float* out, const float* in, size_t outer, size_t n, float scale,
                           bool accumulate) {
  Op op;
  for(size_t o = blockIdx.x; o < outer; o += gridDim.x) {
    const float* row = in + o * n;
    float v = Op::identity;
    for(size_t k = threadIdx.x; k < n; k += blockDim.x)
      v = op(v, row[k]);
    v = blockReduce(v, op);
    if(threadIdx.x == 0)
      out[o] = (accumulate ? out[o] : 0.f) + scale * v;
  }
}

constexpr int kColumns = 32, kLanes = 8;

template <class Op>
__global__ void reduceColumns(float* out, const float* in, size_t outer, size_t n, size_t inner,
                              float scale, bool accumulate) {
  __shared__ float partial[kLanes][kColumns + 1];
  Op op;
  size_t i = size_t(blockIdx.x) * kColumns + threadIdx.x;
  for(size_t o = blockIdx.y; o < outer; o += gridDim.y) {
    float v = Op::identity;
    if(i < inner)
      for(size_t k = threadIdx.y; k < n; k += kLanes)
        v = op(v, in[(o * n + k) * inner + i]);
    partial[threadIdx.y][threadIdx.x] = v;
    __syncthreads();
    if(threadIdx.y == 0 && i < inner) {
      for(int l = 1; l < kLanes; ++l)
        v = op(v, partial[l][threadIdx.x]);
      float& r = out[o * inner + i];
      r = (accumulate ? r : 0.f) + scale * v;
    }
    __syncthreads();
  }
}

// First pass of a long column reduction ([n, inner] -> [inner], few columns): chunk y of the
// rows into partial[y, inner]; reduceColumns then reduces the partials. Fixed chunks and order,
// so the result does not depend on scheduling.
template <class Op>
__global__ void reduceColumnChunks(float* partial, const float* in, size_t n, size_t inner, size_t chunk) {
  __shared__ float lanes[kLanes][kColumns + 1];
  Op op;
  size_t i = size_t(blockIdx.x) * kColumns + threadIdx.x;
  size_t begin = size_t(blockIdx.y) * chunk, end = begin + chunk < n ? begin + chunk : n;
  float v = Op::identity;
  if(i < inner)
    for(size_t k = begin + threadIdx.y; k < end; k += kLanes)
      v = op(v, in[k * inner + i]);
  lanes[threadIdx.y][threadIdx.x] = v;
  __syncthreads();
  if(threadIdx.y == 0 && i < inner) {
    for(int l = 1; l < kLanes; ++l)
      v = op(v, lanes[l][threadIdx.x]);
    partial[size_t(blockIdx.y) * inner + i] = v;
  }
}

template <class Op>
void launchReduce(Context& c, float* out, const float* in, size_t outer, size_t n,
                  size_t inner, float scale, bool accumulate) {
  if(outer * inner == 0)
    return;
  size_t columnBlocks = (inner + kColumns - 1) / kColumns;
  if(outer == 1 && inner > 1 && n >= 1024 && columnBlocks < 256) {  // too few blocks for the GPU
    size_t chunks = std::min<size_t>(128, n / 256), chunk = (n + chunks - 1) / chunks;
    chunks = (n + chunk - 1) / chunk;
    float* partial = static_cast<float*>(c.scratch(chunks * inner * sizeof(float), /*slot=*/1));
    reduceColumnChunks<Op><<<dim3(unsigned(columnBlocks), unsigned(chunks)), dim3(kColumns, kLanes), 0, c.stream>>>(
        partial, in, n, inner, chunk);
    checkLaunch();
    in = partial;
    n = chunks;
  }
  if(inner == 1) {
    unsigned blocks = unsigned(std::min<size_t>(outer, 65535 * 16));
    reduceRows<Op><<<blocks, rowThreads(n), 0, c.stream>>>(out, in, outer, n, scale, accumulate);
  } else {
    dim3 grid(unsigned((inner + kColumns - 1) / kColumns), unsigned(std::min<size_t>(outer, 65535)));
    reduceColumns<Op><<<grid, dim3(kColumns, kLanes), 0, c.stream>>>(out, in, outer, n, inner, scale,
                                                                      accumulate);
  }
  checkLaunch();
}

__global__ void sumGrad(float* dx, const float* dy, size_t total, size_t n, size_t inner, float scale) {
  GRID_STRIDE(j, total) {
    size_t i = j % inner, o = j / (n * inner);
    dx[j] += scale * dy[o * inner + i];
  }
}

// the whole gradient goes to the first maximal element, as on the CPU
__global__ void maxGrad(float* dx, const float* x, const float* y, const float* dy, size_t outer,
                        size_t n, size_t inner) {
  GRID_STRIDE(r, outer * inner) {
    size_t o = r / inner, i = r % inner, base = o * n * inner + i;
    for(size_t k = 0; k < n; ++k)
      if(x[base + k * inner] == y[r]) {
        dx[base + k * inner] += dy[r];
        break;
      }
  }
}

}  // namespace

void reduceAlongAxis(Context& c, float* out, const float* in, size_t outer, size_t n,
                     size_t inner, bool max, float scale, bool accumulate) {
  if(max)
    launchReduce<MaxOp>(c, out, in, outer, n, inner, scale, accumulate);
  else
    launchReduce<SumOp>(c, out, in, outer, n, inner, scale, accumulate);
}

void reduce(ReduceOp op, Tensor y, Tensor x, int axis) {
  AxisView v(x.shape, axis);
  ABORT_IF(y.size() != v.outer * v.inner, "reduce: {} along axis {} into {}", x.shape.toString(),
           axis, y.shape.toString());
  float scale = op == ReduceOp::Mean ? 1.f / float(v.n) : 1.f;
  reduceAlongAxis(context(y), y.f32(), x.f32(), v.outer, v.n, v.inner, op == ReduceOp::Max, scale,
                  false);
}

void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis) {
  AxisView v(x.shape, axis);
  const Context& c = context(dx);
  if(op == ReduceOp::Max) {
    maxGrad<<<blocksFor(v.outer * v.inner), kThreads, 0, c.stream>>>(dx.f32(), x.f32(), y.f32(),
                                                                      dy.f32(), v.outer, v.n, v.inner);
  } else {
    float scale = op == ReduceOp::Mean ? 1.f / float(v.n) : 1.f;
    sumGrad<<<blocksFor(dx.size()), kThreads, 0, c.stream>>>(dx.f32(), dy.f32(), dx.size(), v.n,
                                                             v.inner, scale);
  }
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
