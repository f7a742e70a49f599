#pragma once
// defines: the launch shapes and block-level reductions shared by the CUDA kernels, and Dims4,
// a shape padded to four axes that kernels take by value for index arithmetic.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "tensors/gpu/gpu_context.h"
#include "tensors/shape.h"

namespace marian {
namespace gpu {

constexpr int kThreads = 256;

// Enough blocks of kThreads for n elements, capped: kernels loop with a grid stride.
inline unsigned blocksFor(size_t n) {
  return unsigned(std::max<size_t>(1, std::min<size_t>((n + kThreads - 1) / kThreads, 65535)));
}

// Threads of a row kernel (one block per row): a multiple of 32 covering the row, at most 1024.
inline unsigned rowThreads(size_t n) {
  size_t t = std::min<size_t>(1024, std::max<size_t>(32, (n + 31) / 32 * 32));
  return unsigned(std::min<size_t>(t, 256 + 768 * (n > 4096)));
}

// Blocks of a row kernel, which loops over rows with a grid stride.
inline unsigned rowBlocks(size_t rows) {
  return unsigned(std::max<size_t>(1, std::min<size_t>(rows, 65535 * 16)));
}

#define GRID_STRIDE(i, n)                                                                    \
  for(size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                    \
      i += size_t(blockDim.x) * gridDim.x)

inline void checkLaunch() { CUDA_CHECK(cudaGetLastError()); }

struct Dims4 {
  int d[4];
  size_t s[4];  // strides of an operand inside these dims (0 along its broadcast axes)
};

inline Dims4 dimsOf(const Shape& out, const Shape& operand) {
  Dims4 r;
  auto d = out.padded();
  auto s = broadcastStrides(operand, out);
  for(int a = 0; a < 4; ++a) {
    r.d[a] = d[a];
    r.s[a] = s[a];
  }
  return r;
}

// The offset inside an operand of element i of the (row-major) output the dims describe, in
// index type I: 32-bit division is several times cheaper than 64-bit on the GPU, so kernels use
// uint32_t whenever every index fits (fitsIn32Bits) and size_t otherwise.
template <class I>
__device__ inline I operandOffset(const Dims4& g, I i) {
  I off = 0;
  for(int a = 3; a >= 0; --a) {
    I d = I(g.d[a]);
    I c = i % d;
    i /= d;
    off += c * I(g.s[a]);
  }
  return off;
}

inline bool fitsIn32Bits(size_t elements) { return elements < (size_t(1) << 32); }

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  static constexpr float identity = 0.f;
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  static constexpr float identity = -INFINITY;  // as the CPU's max starts
};

template <class Op>
__device__ inline float warpReduce(float v, Op op) {
  for(int o = 16; o > 0; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The reduction of v over the block, returned to every thread. blockDim.x is a multiple of 32.
template <class Op>
__device__ inline float blockReduce(float v, Op op) {
  __shared__ float partial[32];
  __shared__ float total;
  v = warpReduce(v, op);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // an earlier call may still be reading `total`
  if(lane == 0)
    partial[warp] = v;
  __syncthreads();
  if(warp == 0) {
    v = lane < int(blockDim.x >> 5) ? partial[lane] : Op::identity;
    v = warpReduce(v, op);
    if(lane == 0)
      total = v;
  }
  __syncthreads();
  return total;
}

// Records a kernel error once (the first one wins).
__device__ inline void reportError(DeviceError* e, int code, int value, int limit) {
  if(atomicCAS(&e->code, 0, code) == 0) {
    e->value = value;
    e->limit = limit;
  }
}

// Sum (or max) of in [outer, n, inner] over n into out [outer, inner]:
// out = (accumulate ? out : 0) + scale * reduction. Deterministic (no atomics).
void reduceAlongAxis(Context& c, float* out, const float* in, size_t outer, size_t n,
                     size_t inner, bool max, float scale, bool accumulate);

}  // namespace gpu
}  // namespace marian
