#pragma once
// defines: marian::cpu — the CPU (reference) implementations of tensors/kernels.h.
// Documented there; kernels.cpp calls these for tensors on a CPU device.
#include <array>
#include <cstdint>
#include <vector>

#include "tensors/functors.h"
#include "tensors/tensor.h"

namespace marian {
namespace cpu {

void fill(Tensor t, float value);
void copy(Tensor dst, Tensor src);
void add(Tensor dst, Tensor src, float scale = 1.f);

void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta);
void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta);

void unary(UnaryOp op, Tensor y, Tensor x, float p0 = 0.f, float p1 = 0.f);
void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, float p0 = 0.f, float p1 = 0.f);
void binary(BinaryOp op, Tensor y, Tensor a, Tensor b);
void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy);
void bernoulliMask(Tensor mask, float keep, uint64_t seed);

void reduce(ReduceOp op, Tensor y, Tensor x, int axis);
void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis);

void softmax(Tensor y, Tensor x);
void softmaxGrad(Tensor dx, Tensor y, Tensor dy);
void logSoftmax(Tensor y, Tensor x);
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy);
void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing);
void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss);
void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps);
void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps);

void gatherRows(Tensor y, Tensor table, Tensor indices);
void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy);
void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate);
void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate);
void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate);

void sgdStep(Tensor params, Tensor grads, float lr);
void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t);
void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps);
void emaStep(Tensor avg, Tensor params, float alpha);
double squaredNorm(Tensor t);
void scale(Tensor t, float s);

}  // namespace cpu
}  // namespace marian
