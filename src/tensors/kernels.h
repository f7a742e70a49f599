#pragma once
// defines: marian::kernels — every tensor computation the graph needs, output arguments first.
// Each call runs on the device of its tensors (CPU reference in tensors/cpu/, GPU beside it in
// tensors/gpu/); callers never name a backend. Functions ending in Grad ACCUMULATE into their
// gradient outputs (dx += ...), because a node's gradient collects contributions from every
// consumer.
#include <array>
#include <cstdint>
#include <vector>

#include "tensors/functors.h"
#include "tensors/tensor.h"

namespace marian {
namespace kernels {

// --- memory ------------------------------------------------------------------------------
void fill(Tensor t, float value);
// equal element counts, ranges that do not overlap; the two may live on different devices
// (host <-> GPU, GPU <-> GPU)
void copy(Tensor dst, Tensor src);
// The same between two GPUs without any wait: issued on dst's device (this thread's lane), which
// the caller orders with Backend events; on the CPU, copy.
void copyUnordered(Tensor dst, Tensor src);
// dst += scale * src, summing src over the axes along which dst has extent 1 (the gradient of
// broadcasting). With equal shapes it is a plain axpy; src may live on another device.
void add(Tensor dst, Tensor src, float scale = 1.f);
std::vector<float> toHost(Tensor t);
void fromHost(Tensor t, const std::vector<float>& values);
void fromHostInts(Tensor t, const std::vector<int>& values);

// --- matrix products ------------------------------------------------------------------------
// C = alpha * op(A) * op(B) + beta * C, with each tensor seen as a matrix [rows, last axis].
void gemm(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta);
// The same over the leading axes: A [..., m, k], B [..., k, n]; an operand batch of 1
// broadcasts, and a result batch of 1 receives the sum of the products.
void gemmBatched(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta);

// --- element-wise (numpy broadcasting for binary ops) --------------------------------------
void unary(UnaryOp op, Tensor y, Tensor x, float p0 = 0.f, float p1 = 0.f);
void unaryGrad(UnaryOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, float p0 = 0.f, float p1 = 0.f);
void binary(BinaryOp op, Tensor y, Tensor a, Tensor b);
void binaryGrad(BinaryOp op, Tensor da, Tensor db, Tensor a, Tensor b, Tensor dy);  // da/db may be empty
// mask = 1/keep with probability keep, else 0; a counter-based hash of (seed, index), so the
// same seed gives the same mask on every device and every re-run.
void bernoulliMask(Tensor mask, float keep, uint64_t seed);
// y (+)= x * the mask bernoulliMask(keep, seed) draws for x's shape, never stored: dropout's
// forward, and its backward (dx += dy * mask) with accumulate. With maskRowOf (int32, one per
// row of x as a matrix [rows, n]) row r takes row maskRowOf[r] of a mask [.., n] instead: rows
// naming the same mask row drop the same units.
void dropoutMultiply(Tensor y, Tensor x, float keep, uint64_t seed, bool accumulate, Tensor maskRowOf = {});

// --- reductions along one axis (the axis is kept with extent 1) ------------------------------
void reduce(ReduceOp op, Tensor y, Tensor x, int axis);
void reduceGrad(ReduceOp op, Tensor dx, Tensor x, Tensor y, Tensor dy, int axis);

// --- along the last axis -----------------------------------------------------------------------
void softmax(Tensor y, Tensor x);
void softmaxGrad(Tensor dx, Tensor y, Tensor dy);
void logSoftmax(Tensor y, Tensor x);
void logSoftmaxGrad(Tensor dx, Tensor y, Tensor dy);
// Per row r: loss[r] = mask[r] * ((1-eps) * -log p(label[r]) + eps * mean_v -log p(v)).
// labels int32 [rows]; mask float [rows] or empty (all ones); loss [rows].
void crossEntropy(Tensor loss, Tensor logits, Tensor labels, Tensor mask, float smoothing);
void crossEntropyGrad(Tensor dlogits, Tensor logits, Tensor labels, Tensor mask, float smoothing,
                      Tensor dloss);
// y = gamma * (x - mean) / sqrt(var + eps) + beta; gamma, beta [last] or empty.
void layerNorm(Tensor y, Tensor x, Tensor gamma, Tensor beta, float eps);
void layerNormGrad(Tensor dx, Tensor dgamma, Tensor dbeta, Tensor x, Tensor gamma, Tensor dy,
                   float eps);

// --- indexing and layout -----------------------------------------------------------------------
// y[i, :] = table[indices[i], :]; indices int32. An index out of range is an error.
void gatherRows(Tensor y, Tensor table, Tensor indices);
void scatterAddRows(Tensor dtable, Tensor indices, Tensor dy);
// y = x with axes permuted: y.shape[i] = x.shape[perm[i]]; y += ... when accumulate.
void transpose(Tensor y, Tensor x, const std::vector<int>& perm, bool accumulate);
// Between the rows [N, H*d] of the real positions only (no padding) and the attention heads
// [B, H, T, d] of all positions: rowOf int32 [B*T] is the row of position (b, t), -1 for padding.
// headsFromRows: heads[b, h, t, :] (+)= rows[rowOf[b*T+t], h*d : (h+1)*d], zeros (nothing added)
// at padding. rowsFromHeads: the reverse, for the rows rowOf names (each at most once); others
// are left as they are.
void headsFromRows(Tensor heads, Tensor rows, Tensor rowOf, bool accumulate);
void rowsFromHeads(Tensor rows, Tensor heads, Tensor rowOf, bool accumulate);
// dst[..., offset : offset + src.shape[axis], ...] (+)= src
void insertSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate);
// dst (+)= src[..., offset : offset + dst.shape[axis], ...]
void extractSlice(Tensor dst, Tensor src, int axis, int offset, bool accumulate);

// --- optimizer steps on a flat range (a whole model or one shard) -----------------------------
void sgdStep(Tensor params, Tensor grads, float lr);
// Adam with bias correction at step t (1-based); m and v are the moment buffers of the range.
// varianceSteps: the steps v has taken in (this one included when updateVariance), t normally;
// v is corrected as after varianceSteps steps, and on a step without updateVariance it stays
// (1-bit Adam's frozen variance, 0/1 Adam's steps between variance updates).
void adamStep(Tensor params, Tensor grads, Tensor m, Tensor v, float lr, float beta1, float beta2,
              float eps, uint64_t t, uint64_t varianceSteps, bool updateVariance = true);
// Adagrad: gt += g^2;  p -= lr * g / (sqrt(gt) + eps)
void adagradStep(Tensor params, Tensor grads, Tensor gt, float lr, float eps);
// Exponential moving average: avg += alpha * (params - avg)
void emaStep(Tensor avg, Tensor params, float alpha);
// sum of squares (for gradient norms), returned to the host
double squaredNorm(Tensor t);
// t *= s in place
void scale(Tensor t, float s);

// --- gradient dropping where the gradient lives (only the selection crosses to the host) -------
// A threshold that about `keep` of the |x| reach: the (1 - keep) quantile of one position per
// stratum (max(1000, n/100) strata), positions drawn from a counter hash of `seed`, so every
// device picks the same sample.
float sampledThreshold(Tensor x, double keep, uint64_t seed);
// The k-th largest |x| (0 when k == 0 or k >= x.size()): the exact top-k threshold.
float exactThreshold(Tensor x, size_t k);
// The entries with |residual| >= threshold (and != 0) move out of the residual into
// (indices, values), ascending: afterwards taken + residual == old residual, exactly.
// Dropping is: add(residual, grad); t = sampledThreshold(residual, keep); takeAbove(residual, t).
void takeAbove(Tensor residual, float threshold, std::vector<uint32_t>& indices,
               std::vector<float>& values);
// dense[indices[j]] += values[j] for j < k (host arrays: a received message is read in place)
void scatterAdd(Tensor dense, const uint32_t* indices, const float* values, size_t k);
inline void scatterAdd(Tensor dense, const std::vector<uint32_t>& indices, const std::vector<float>& values) {
  scatterAdd(dense, indices.data(), values.data(), indices.size());
}
// values[k] = dense[indices[k]]
void gatherAt(std::vector<float>& values, Tensor dense, const std::vector<uint32_t>& indices);

}  // namespace kernels
}  // namespace marian
