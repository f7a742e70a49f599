// Element-wise CUDA kernels, instantiated for every functor of tensors/functors.h (the same
// definitions the CPU runs), plus fill/copy/add, which also move data between devices.
#include <cuda_bf16.h>

#include "tensors/backend.h"
#include "tensors/counter_hash.h"
#include "tensors/cpu/cpu_kernels.h"
#include "tensors/gpu/gpu_kernels.h"
#include "tensors/gpu/launch.cuh"
#include "tensors/kernel_checks.h"

namespace marian {
namespace gpu {

namespace {

__global__ void fillKernel(float* y, size_t n, float v) { GRID_STRIDE(i, n) y[i] = v; }

__global__ void toBfloat16(__nv_bfloat16* y, const float* x, size_t n) { GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(x[i]); }
__global__ void fromBfloat16(float* y, const __nv_bfloat16* x, size_t n) { GRID_STRIDE(i, n) y[i] = __bfloat162float(x[i]); }

__global__ void axpy(float* y, const float* x, size_t n, float scale) {
  GRID_STRIDE(i, n) y[i] += scale * x[i];
}

// dst [t dims] += scale * sum of src over the positions that broadcast onto each dst element
// (any pattern of broadcast axes; the common ones go through reduceAlongAxis instead).
__global__ void addBroadcastGeneric(float* dst, const float* src, Dims4 t, Dims4 o, size_t n,
                                    float scale) {
  GRID_STRIDE(j, n) {
    int c[4];
    size_t r = j;
    for(int a = 3; a >= 0; --a) {
      c[a] = int(r % size_t(t.d[a]));
      r /= size_t(t.d[a]);
    }
    size_t total = 1;
    for(int a = 0; a < 4; ++a)
      total *= t.d[a] == 1 ? size_t(o.d[a]) : 1;
    float sum = 0.f;
    for(size_t m = 0; m < total; ++m) {
      size_t rest = m, off = 0;
      for(int a = 3; a >= 0; --a) {
        size_t ca = c[a];
        if(t.d[a] == 1) {
          ca = rest % size_t(o.d[a]);
          rest /= size_t(o.d[a]);
        }
        off += ca * o.s[a];
      }
      sum += src[off];
    }
    dst[j] += scale * sum;
  }
}

// dst += scale * src on one device, dst broadcasting onto src.
void addOnDevice(Context& c, Tensor dst, const float* src, const Shape& srcShape, float scale) {
  size_t n = dst.size();
  if(n == srcShape.elements()) {
    axpy<<<blocksFor(n), kThreads, 0, c.stream>>>(dst.f32(), src, n, scale);
    checkLaunch();
    return;
  }
  broadcastStrides(dst.shape, srcShape);  // the CPU's check: aborts unless dst broadcasts onto src
  auto t = dst.shape.padded(), o = srcShape.padded();
  int first = -1, last = -1;  // the axes summed over: dst extent 1, src extent > 1
  for(int a = 0; a < 4; ++a)
    if(t[a] == 1 && o[a] > 1) {
      first = first < 0 ? a : first;
      last = a;
    }
  bool contiguous = true;  // no kept axis of extent > 1 between them
  for(int a = first + 1; a < last; ++a)
    contiguous = contiguous && !(t[a] == o[a] && o[a] > 1);
  if(contiguous) {  // [outer, n, inner] with n summed
    size_t outer = 1, mid = 1, inner = 1;
    for(int a = 0; a < 4; ++a)
      (a < first ? outer : a <= last ? mid : inner) *= size_t(o[a]);
    reduceAlongAxis(c, dst.f32(), src, outer, mid, inner, /*max=*/false, scale, /*accumulate=*/true);
    return;
  }
  Dims4 td = dimsOf(dst.shape, dst.shape), od = dimsOf(srcShape, srcShape);
  addBroadcastGeneric<<<blocksFor(n), kThreads, 0, c.stream>>>(dst.f32(), src, td, od, n, scale);
  checkLaunch();
}

// A device pointer on dst's GPU holding src's bytes (src itself when it is already there).
const void* onDeviceOf(Context& c, const Tensor& dst, const Tensor& src) {
  if(src.device == dst.device)
    return src.data;
  void* tmp = c.scratch(src.bytes());
  if(src.device.type == DeviceType::cpu) {
    CUDA_CHECK(cudaMemcpyAsync(tmp, src.data, src.bytes(), cudaMemcpyHostToDevice, c.stream));
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
  } else {
    context(src).synchronize();  // src's producer ran on its own stream
    CUDA_CHECK(cudaMemcpyPeerAsync(tmp, dst.device.id, src.data, src.device.id, src.bytes(), c.stream));
    c.synchronize();  // the caller may reuse src as soon as add returns
  }
  context(dst);  // make dst's device current again
  return tmp;
}

template <class F>
__global__ void unaryKernel(float* y, const float* x, size_t n, F f) {
  GRID_STRIDE(i, n) y[i] = f.fwd(x[i]);
}
template <class F>
__global__ void unaryGradKernel(float* dx, const float* x, const float* y, const float* dy, size_t n, bool accumulate,
                                F f) {
  GRID_STRIDE(i, n) {
    float d = dy[i] * f.grad(x[i], y[i]);
    dx[i] = accumulate ? dx[i] + d : d;
  }
}

template <class F>
__global__ void binaryFlat(float* y, const float* a, const float* b, size_t n, F f) {
  GRID_STRIDE(i, n) y[i] = f.fwd(a[i], b[i]);
}
template <class F, class I>
__global__ void binaryBroadcast(float* y, const float* a, const float* b, Dims4 da, Dims4 db,
                                size_t n, F f) {
  GRID_STRIDE(i, n) y[i] = f.fwd(a[operandOffset(da, I(i))], b[operandOffset(db, I(i))]);
}

// out[i] (+)= dy[i] * d/d(operand) f at the inputs of element i of the output
template <class F, bool WrtA, class I>
__global__ void binaryGradKernel(float* out, bool accumulate, const float* a, const float* b,
                                 const float* dy, Dims4 da, Dims4 db, size_t n, F f) {
  GRID_STRIDE(i, n) {
    float va = a[operandOffset(da, I(i))], vb = b[operandOffset(db, I(i))];
    float g = dy[i] * (WrtA ? f.da(va, vb) : f.db(va, vb));
    out[i] = accumulate ? out[i] + g : g;
  }
}

__global__ void bernoulliKernel(float* m, size_t n, DropoutMask draw) {
  GRID_STRIDE(i, n) m[i] = draw.at(i);
}

__global__ void dropoutKernel(float* y, const float* x, size_t n, DropoutMask draw, bool accumulate) {
  GRID_STRIDE(i, n) y[i] = accumulate ? draw.addTo(y[i], x[i], i) : x[i] * draw.at(i);
}

// Element (r, j) takes the mask's element (maskRow[r], j) of a mask with `cols` columns.
__global__ void dropoutRowsKernel(float* y, const float* x, const int* maskRow, size_t n, size_t cols,
                                  DropoutMask draw, bool accumulate) {
  GRID_STRIDE(i, n) {
    uint64_t m = uint64_t(maskRow[i / cols]) * cols + i % cols;
    y[i] = accumulate ? draw.addTo(y[i], x[i], m) : x[i] * draw.at(m);
  }
}

}  // namespace

void convert(Tensor dst, Tensor src, Tensor addRows) {
  ABORT_IF(dst.size() != src.size() || dst.device != src.device, "convert: {} values on {} into {} on {}", src.size(),
           src.device.toString(), dst.size(), dst.device.toString());
  ABORT_IF(dst.data == src.data && dst.type != src.type, "convert: not in place on a GPU");
  if(!addRows.empty() && src.size() > 0) {
    ABORT_IF(src.type != Type::float32 || dst.type != Type::bfloat16 || addRows.size() != size_t(src.shape.back()),
             "convert: rows of {} ({}) added into {} while converted into {}", src.shape.toString(), typeName(src.type),
             addRows.shape.toString(), typeName(dst.type));
    add(addRows, src.reshaped(Shape({int(src.size() / addRows.size()), int(addRows.size())})));
  }
  const Context& c = context(dst);
  size_t n = dst.size();
  if(n == 0)
    return;
  if(dst.type == src.type)
    CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.bytes(), cudaMemcpyDeviceToDevice, c.stream));
  else if(src.type == Type::float32 && dst.type == Type::bfloat16)
    toBfloat16<<<blocksFor(n), kThreads, 0, c.stream>>>(static_cast<__nv_bfloat16*>(dst.data), src.f32(), n);
  else if(src.type == Type::bfloat16 && dst.type == Type::float32)
    fromBfloat16<<<blocksFor(n), kThreads, 0, c.stream>>>(dst.f32(), static_cast<const __nv_bfloat16*>(src.data), n);
  else
    ABORT("convert: {} to {} is not supported", typeName(src.type), typeName(dst.type));
  checkLaunch();
}

void fill(Tensor t, float value) {
  const Context& c = context(t);
  fillKernel<<<blocksFor(t.size()), kThreads, 0, c.stream>>>(t.f32(), t.size(), value);
  checkLaunch();
}

void copy(Tensor dst, Tensor src) {
  ABORT_IF(dst.size() != src.size() || dst.type != src.type, "copy: {} {} into {} {}",
           typeName(src.type), src.shape.toString(), typeName(dst.type), dst.shape.toString());
  if(dst.device.type == DeviceType::cpu) {
    backendFor(src.device).copyToHost(dst.data, src.data, dst.bytes());
  } else if(src.device.type == DeviceType::cpu) {
    backendFor(dst.device).copyFromHost(dst.data, src.data, dst.bytes());
  } else if(dst.device == src.device) {
    const Context& c = context(dst);
    CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, dst.bytes(), cudaMemcpyDeviceToDevice, c.stream));
  } else {
    context(src).synchronize();
    Context& c = context(dst);
    CUDA_CHECK(cudaMemcpyPeerAsync(dst.data, dst.device.id, src.data, src.device.id, dst.bytes(), c.stream));
    c.synchronize();  // readers on other streams may use dst next
  }
}

void copyUnordered(Tensor dst, Tensor src) {
  if(dst.device.type != DeviceType::gpu || src.device.type != DeviceType::gpu)
    return copy(dst, src);  // the host takes part: nothing to order
  ABORT_IF(dst.size() != src.size() || dst.type != src.type, "copy: {} {} into {} {}",
           typeName(src.type), src.shape.toString(), typeName(dst.type), dst.shape.toString());
  const Context& c = context(dst);
  CUDA_CHECK(cudaMemcpyPeerAsync(dst.data, dst.device.id, src.data, src.device.id, dst.bytes(), c.stream));
}

void add(Tensor dst, Tensor src, float scale) {
  if(dst.device.type == DeviceType::cpu) {  // a GPU tensor into host memory
    std::vector<float> host(src.size());
    backendFor(src.device).copyToHost(host.data(), src.data, src.bytes());
    cpu::add(dst, Tensor(host.data(), src.shape, src.type, cpuDevice()), scale);
    return;
  }
  Context& c = context(dst);
  const float* s = static_cast<const float*>(onDeviceOf(c, dst, src));
  addOnDevice(c, dst, s, src.shape, scale);
}

void unary(UnaryOp op, Tensor y, Tensor x, float p0, float p1) {
  ABORT_IF(y.size() != x.size(), "unary: {} into {}", x.shape.toString(), y.shape.toString());
  const Context& c = context(y);
  visitUnary(op, p0, p1, [&](auto f) {
    unaryKernel<<<blocksFor(y.size()), kThreads, 0, c.stream>>>(y.f32(), x.f32(), y.size(), f);
  });
  checkLaunch();
}

void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, bool accumulate, float p0, float p1) {
  const Context& c = context(dx);
  visitUnary(op, p0, p1, [&](auto f) {
    unaryGradKernel<<<blocksFor(dx.size()), kThreads, 0, c.stream>>>(dx.f32(), x.f32(), y.f32(),
                                                                     dy.f32(), dx.size(), accumulate, f);
  });
  checkLaunch();
}

void binary(BinaryOp op, Tensor y, Tensor a, Tensor b) {
  ABORT_IF(Shape::broadcast(a.shape, b.shape).elements() != y.size(),
           "binary: {} and {} into {}", a.shape.toString(), b.shape.toString(), y.shape.toString());
  const Context& c = context(y);
  size_t n = y.size();
  visitBinary(op, [&](auto f) {
    if(a.size() == n && b.size() == n)
      binaryFlat<<<blocksFor(n), kThreads, 0, c.stream>>>(y.f32(), a.f32(), b.f32(), n, f);
    else if(fitsIn32Bits(n))
      binaryBroadcast<decltype(f), uint32_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
          y.f32(), a.f32(), b.f32(), dimsOf(y.shape, a.shape), dimsOf(y.shape, b.shape), n, f);
    else
      binaryBroadcast<decltype(f), size_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
          y.f32(), a.f32(), b.f32(), dimsOf(y.shape, a.shape), dimsOf(y.shape, b.shape), n, f);
  });
  checkLaunch();
}

// An operand of the output's size accumulates directly; a broadcast one gets the full-size
// product in scratch, summed over its broadcast axes by add (deterministic, no atomics).
void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy) {
  Context& c = context(dy);
  size_t n = dy.size();
  Dims4 dimA = dimsOf(dy.shape, a.shape), dimB = dimsOf(dy.shape, b.shape);
  visitBinary(op, [&](auto f) {
    using F = decltype(f);
    for(int which = 0; which < 2; ++which) {
      Tensor target = which == 0 ? da : db;
      if(target.empty())
        continue;
      bool direct = target.size() == n;
      float* out = direct ? target.f32() : static_cast<float*>(c.scratch(n * sizeof(float)));
      bool narrow = fitsIn32Bits(n);
      if(which == 0 && narrow)
        binaryGradKernel<F, true, uint32_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
            out, direct, a.f32(), b.f32(), dy.f32(), dimA, dimB, n, f);
      else if(which == 0)
        binaryGradKernel<F, true, size_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
            out, direct, a.f32(), b.f32(), dy.f32(), dimA, dimB, n, f);
      else if(narrow)
        binaryGradKernel<F, false, uint32_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
            out, direct, a.f32(), b.f32(), dy.f32(), dimA, dimB, n, f);
      else
        binaryGradKernel<F, false, size_t><<<blocksFor(n), kThreads, 0, c.stream>>>(
            out, direct, a.f32(), b.f32(), dy.f32(), dimA, dimB, n, f);
      checkLaunch();
      if(!direct)
        addOnDevice(c, target, out, dy.shape, 1.f);
    }
  });
}

void bernoulliMask(Tensor mask, float keep, uint64_t seed) {
  checks::keepProbability(keep);
  const Context& c = context(mask);
  bernoulliKernel<<<blocksFor(mask.size()), kThreads, 0, c.stream>>>(mask.f32(), mask.size(),
                                                                     DropoutMask(keep, seed));
  checkLaunch();
}

void dropoutMultiply(Tensor y, Tensor x, float keep, uint64_t seed, bool accumulate, Tensor maskRowOf) {
  checks::dropoutOperands(y, x, keep, maskRowOf);
  const Context& c = context(y);
  if(maskRowOf.empty())
    dropoutKernel<<<blocksFor(y.size()), kThreads, 0, c.stream>>>(y.f32(), x.f32(), y.size(),
                                                                 DropoutMask(keep, seed), accumulate);
  else
    dropoutRowsKernel<<<blocksFor(y.size()), kThreads, 0, c.stream>>>(
        y.f32(), x.f32(), maskRowOf.i32(), y.size(), x.shape.back(), DropoutMask(keep, seed), accumulate);
  checkLaunch();
}

}  // namespace gpu
}  // namespace marian
