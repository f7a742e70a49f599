// Device dispatch for tensors/kernels.h: a kernel runs on the device of its first tensor (copy
// and add also when the other one lives elsewhere). Without the GPU backend, a GPU tensor
// reaching a kernel is a clear error.
#include "tensors/kernels.h"

#include "tensors/backend.h"
#include "tensors/cpu/cpu_kernels.h"
#ifdef MARIAN_CUDA
#include "tensors/gpu/gpu_kernels.h"
#endif

namespace marian {
namespace kernels {

namespace {
bool onGpu(const Tensor& t) { return t.device.type == DeviceType::gpu; }
}  // namespace

#ifdef MARIAN_CUDA
#define ON_DEVICE(gpuSide, call) return (gpuSide) ? gpu::call : cpu::call
#else
#define ON_DEVICE(gpuSide, call)                                                             \
  ABORT_IF(gpuSide, "A GPU tensor reached a kernel, but this build has no GPU backend "     \
                    "(configure with -DCOMPILE_CUDA=on where the CUDA toolkit is installed)"); \
  return cpu::call
#endif

void fill(Tensor t, float value) { ON_DEVICE(onGpu(t), fill(t, value)); }
void copy(Tensor dst, Tensor src) { ON_DEVICE(onGpu(dst) || onGpu(src), copy(dst, src)); }
void copyUnordered(Tensor dst, Tensor src) { ON_DEVICE(onGpu(dst) || onGpu(src), copyUnordered(dst, src)); }
void convert(Tensor dst, Tensor src, Tensor addRows) { ON_DEVICE(onGpu(dst), convert(dst, src, addRows)); }
void add(Tensor dst, Tensor src, float scale) { ON_DEVICE(onGpu(dst) || onGpu(src), add(dst, src, scale)); }

std::vector<float> toHost(Tensor t) {
  std::vector<float> v(t.size());
  backendFor(t.device).copyToHost(v.data(), t.f32(), t.bytes());
  return v;
}
void fromHost(Tensor t, const std::vector<float>& values) {
  ABORT_IF(values.size() != t.size(), "{} values for a tensor of shape {}", values.size(),
           t.shape.toString());
  backendFor(t.device).copyFromHost(t.f32(), values.data(), t.bytes());
}
void fromHostInts(Tensor t, const std::vector<int>& values) {
  ABORT_IF(values.size() != t.size(), "{} values for a tensor of shape {}", values.size(),
           t.shape.toString());
  backendFor(t.device).copyFromHost(t.i32(), values.data(), t.bytes());
}

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  ON_DEVICE(onGpu(C), gemm(C, A, B, transA, transB, alpha, beta));
}
void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  ON_DEVICE(onGpu(C), gemmBatched(C, A, B, transA, transB, alpha, beta));
}

void unary(UnaryOp op, Tensor y, Tensor x, float p0, float p1) {
  ON_DEVICE(onGpu(y), unary(op, y, x, p0, p1));
}
void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, bool accumulate, float p0, float p1) {
  ON_DEVICE(onGpu(dx), unaryGrad(op, dx, x, y, dy, accumulate, p0, p1));
}
void binary(BinaryOp op, Tensor y, Tensor a, Tensor b) { ON_DEVICE(onGpu(y), binary(op, y, a, b)); }
void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy) {
  ON_DEVICE(onGpu(dy), binaryGrad(op, da, db, a, b, dy));
}
void bernoulliMask(Tensor mask, float keep, uint64_t seed) {
  ON_DEVICE(onGpu(mask), bernoulliMask(mask, keep, seed));
}
void dropoutMultiply(Tensor y, Tensor x, float keep, uint64_t seed, bool accumulate, Tensor maskRowOf) {
  ON_DEVICE(onGpu(y), dropoutMultiply(y, x, keep, seed, accumulate, maskRowOf));
}

void reduce(ReduceOp op, Tensor y, Tensor x, int axis) { ON_DEVICE(onGpu(y), reduce(op, y, x, axis)); }
void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis) {
  ON_DEVICE(onGpu(dx), reduceGrad(op, dx, x, y, dy, axis));
}

void softmax(Tensor y, Tensor x) { ON_DEVICE(onGpu(y), softmax(y, x)); }
void softmaxGrad(Tensor dx, Tensor y, Tensor dy) { ON_DEVICE(onGpu(dx), softmaxGrad(dx, y, dy)); }
void logSoftmax(Tensor y, Tensor x) { ON_DEVICE(onGpu(y), logSoftmax(y, x)); }
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy) { ON_DEVICE(onGpu(dx), logSoftmaxGrad(dx, y, dy)); }
void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing) {
  ON_DEVICE(onGpu(loss), crossEntropy(loss, logits, labels, mask, smoothing));
}
void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss, bool accumulate) {
  ON_DEVICE(onGpu(dlogits), crossEntropyGrad(dlogits, logits, labels, mask, smoothing, dloss, accumulate));
}
void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps) {
  ON_DEVICE(onGpu(y), layerNorm(y, x, gamma, beta, eps));
}
void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps) {
  ON_DEVICE(onGpu(dy), layerNormGrad(dx, dgamma, dbeta, x, gamma, dy, eps));
}

void gatherRows(Tensor y, Tensor table, Tensor indices) {
  ON_DEVICE(onGpu(y), gatherRows(y, table, indices));
}
void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy) {
  ON_DEVICE(onGpu(dtable), scatterAddRows(dtable, indices, dy));
}
void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate) {
  ON_DEVICE(onGpu(y), transpose(y, x, perm, accumulate));
}
void headsFromRows(Tensor heads, Tensor rows, Tensor rowOf, bool accumulate) {
  ON_DEVICE(onGpu(heads), headsFromRows(heads, rows, rowOf, accumulate));
}
void rowsFromHeads(Tensor rows, Tensor heads, Tensor rowOf, bool accumulate) {
  ON_DEVICE(onGpu(rows), rowsFromHeads(rows, heads, rowOf, accumulate));
}
void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  ON_DEVICE(onGpu(dst), insertSlice(dst, src, axis, offset, accumulate));
}
void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  ON_DEVICE(onGpu(dst), extractSlice(dst, src, axis, offset, accumulate));
}

void sgdStep(Tensor params, Tensor grads, float lr) { ON_DEVICE(onGpu(params), sgdStep(params, grads, lr)); }
void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t, uint64_t varianceSteps, bool updateVariance, float meanOver, float weightDecay) {
  ON_DEVICE(onGpu(params), adamStep(params, grads, m, v, lr, beta1, beta2, eps, t, varianceSteps, updateVariance,
                                    meanOver, weightDecay));
}
void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps) {
  ON_DEVICE(onGpu(params), adagradStep(params, grads, gt, lr, eps));
}
void emaStep(Tensor avg, Tensor params, float alpha) { ON_DEVICE(onGpu(avg), emaStep(avg, params, alpha)); }
double squaredNorm(Tensor t) { ON_DEVICE(onGpu(t), squaredNorm(t)); }
void scale(Tensor t, float s) { ON_DEVICE(onGpu(t), scale(t, s)); }

float sampledThreshold(Tensor x, double keep, uint64_t seed) {
  ON_DEVICE(onGpu(x), sampledThreshold(x, keep, seed));
}
float exactThreshold(Tensor x, size_t k) { ON_DEVICE(onGpu(x), exactThreshold(x, k)); }
void takeAbove(Tensor residual, float threshold, std::vector<uint32_t>& indices,
               std::vector<float>& values) {
  ON_DEVICE(onGpu(residual), takeAbove(residual, threshold, indices, values));
}
void scatterAdd(Tensor dense, const uint32_t* indices, const float* values, size_t k) {
  ON_DEVICE(onGpu(dense), scatterAdd(dense, indices, values, k));
}
void gatherAt(std::vector<float>& values, Tensor dense, const std::vector<uint32_t>& indices) {
  ON_DEVICE(onGpu(dense), gatherAt(values, dense, indices));
}

}  // namespace kernels
}  // namespace marian
