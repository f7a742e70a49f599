// Device dispatch for tensors/kernels.h. A kernel runs where its first tensor lives; the GPU
// backend adds its branch here when its kernels exist (issue: GPU backend).
#include "tensors/kernels.h"

#include "tensors/backend.h"
#include "tensors/cpu/cpu_kernels.h"

namespace marian {
namespace kernels {

namespace {
// Until the GPU kernels land, a GPU tensor reaching a kernel is a clear error, not a crash.
void requireCpu(const Tensor& t, const char* kernel) {
  ABORT_IF(t.device.type != DeviceType::cpu, "Kernel '{}' has no implementation for device {} yet",
           kernel, t.device.toString());
}
}  // namespace

void fill(Tensor t, float value) { requireCpu(t, "fill"); cpu::fill(t, value); }
void copy(Tensor dst, Tensor src) { requireCpu(dst, "copy"); cpu::copy(dst, src); }
void add(Tensor dst, Tensor src, float scale) { requireCpu(dst, "add"); cpu::add(dst, src, scale); }

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
  requireCpu(C, "gemm");
  cpu::gemm(C, A, B, transA, transB, alpha, beta);
}
void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  requireCpu(C, "gemmBatched");
  cpu::gemmBatched(C, A, B, transA, transB, alpha, beta);
}

void unary(UnaryOp op, Tensor y, Tensor x, float p0, float p1) {
  requireCpu(y, "unary");
  cpu::unary(op, y, x, p0, p1);
}
void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, float p0, float p1) {
  requireCpu(dx, "unaryGrad");
  cpu::unaryGrad(op, dx, x, y, dy, p0, p1);
}
void binary(BinaryOp op, Tensor y, Tensor a, Tensor b) {
  requireCpu(y, "binary");
  cpu::binary(op, y, a, b);
}
void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy) {
  requireCpu(dy, "binaryGrad");
  cpu::binaryGrad(op, da, db, a, b, dy);
}
void bernoulliMask(Tensor mask, float keep, uint64_t seed) {
  requireCpu(mask, "bernoulliMask");
  cpu::bernoulliMask(mask, keep, seed);
}

void reduce(ReduceOp op, Tensor y, Tensor x, int axis) {
  requireCpu(y, "reduce");
  cpu::reduce(op, y, x, axis);
}
void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis) {
  requireCpu(dx, "reduceGrad");
  cpu::reduceGrad(op, dx, x, y, dy, axis);
}

void softmax(Tensor y, Tensor x) { requireCpu(y, "softmax"); cpu::softmax(y, x); }
void softmaxGrad(Tensor dx, Tensor y, Tensor dy) { requireCpu(dx, "softmaxGrad"); cpu::softmaxGrad(dx, y, dy); }
void logSoftmax(Tensor y, Tensor x) { requireCpu(y, "logSoftmax"); cpu::logSoftmax(y, x); }
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy) {
  requireCpu(dx, "logSoftmaxGrad");
  cpu::logSoftmaxGrad(dx, y, dy);
}
void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing) {
  requireCpu(loss, "crossEntropy");
  cpu::crossEntropy(loss, logits, labels, mask, smoothing);
}
void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss) {
  requireCpu(dlogits, "crossEntropyGrad");
  cpu::crossEntropyGrad(dlogits, logits, labels, mask, smoothing, dloss);
}
void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps) {
  requireCpu(y, "layerNorm");
  cpu::layerNorm(y, x, gamma, beta, eps);
}
void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps) {
  requireCpu(dy, "layerNormGrad");
  cpu::layerNormGrad(dx, dgamma, dbeta, x, gamma, dy, eps);
}

void gatherRows(Tensor y, Tensor table, Tensor indices) {
  requireCpu(y, "gatherRows");
  cpu::gatherRows(y, table, indices);
}
void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy) {
  requireCpu(dtable, "scatterAddRows");
  cpu::scatterAddRows(dtable, indices, dy);
}
void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate) {
  requireCpu(y, "transpose");
  cpu::transpose(y, x, perm, accumulate);
}
void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  requireCpu(dst, "insertSlice");
  cpu::insertSlice(dst, src, axis, offset, accumulate);
}
void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate) {
  requireCpu(dst, "extractSlice");
  cpu::extractSlice(dst, src, axis, offset, accumulate);
}

void sgdStep(Tensor params, Tensor grads, float lr) {
  requireCpu(params, "sgdStep");
  cpu::sgdStep(params, grads, lr);
}
void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t) {
  requireCpu(params, "adamStep");
  cpu::adamStep(params, grads, m, v, lr, beta1, beta2, eps, t);
}
void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps) {
  requireCpu(params, "adagradStep");
  cpu::adagradStep(params, grads, gt, lr, eps);
}
void emaStep(Tensor avg, Tensor params, float alpha) {
  requireCpu(avg, "emaStep");
  cpu::emaStep(avg, params, alpha);
}
double squaredNorm(Tensor t) {
  requireCpu(t, "squaredNorm");
  return cpu::squaredNorm(t);
}
void scale(Tensor t, float s) {
  requireCpu(t, "scale");
  cpu::scale(t, s);
}

}  // namespace kernels
}  // namespace marian
