#pragma once
// defines: the argument checks and shape arithmetic that the CPU and the GPU kernels share, so
// both backends refuse the same inputs with the same message.
#include <algorithm>
#include <cstdint>

#include "tensors/axis_view.h"
#include "tensors/tensor.h"

namespace marian {
namespace checks {

struct MatDims {
  int m, n, k;
};

// The product's dimensions from the stored matrices [ra, ca] and [rb, cb].
inline MatDims productDims(int ra, int ca, int rb, int cb, bool transA, bool transB, const char* what,
                           const Shape& sa, const Shape& sb) {
  int m = transA ? ca : ra, ka = transA ? ra : ca;
  int kb = transB ? cb : rb, n = transB ? rb : cb;
  ABORT_IF(ka != kb, "{}: inner dimensions differ for {}{} x {}{}", what, sa.toString(),
           transA ? "^T" : "", sb.toString(), transB ? "^T" : "");
  return {m, n, ka};
}

inline MatDims gemmDims(Tensor C, Tensor A, Tensor B, bool transA, bool transB) {
  MatDims d = productDims(int(A.shape.rows()), A.shape.back(), int(B.shape.rows()), B.shape.back(),
                          transA, transB, "gemm", A.shape, B.shape);
  ABORT_IF(C.shape.rows() != size_t(d.m) || C.shape.back() != d.n,
           "gemm: result {} should be [{}x{}]", C.shape.toString(), d.m, d.n);
  return d;
}

// A batched product A [..., m, k] x B [..., k, n]: matrix sizes and batch counts; an operand
// batch of 1 broadcasts, a result batch of 1 receives the sum of the products.
struct BatchedDims {
  MatDims d;
  size_t sizeA, sizeB, sizeC, batchA, batchB, batchC, batch;
};

inline BatchedDims batchedDims(Tensor C, Tensor A, Tensor B, bool transA, bool transB) {
  ABORT_IF(A.shape.rank() < 2 || B.shape.rank() < 2, "gemmBatched needs matrices, got {} and {}",
           A.shape.toString(), B.shape.toString());
  BatchedDims r;
  r.d = productDims(A.shape[-2], A.shape[-1], B.shape[-2], B.shape[-1], transA, transB, "gemmBatched",
                    A.shape, B.shape);
  r.sizeA = size_t(A.shape[-2]) * A.shape[-1];
  r.sizeB = size_t(B.shape[-2]) * B.shape[-1];
  r.sizeC = size_t(r.d.m) * r.d.n;
  // (matrices() counts the leading dimensions: with k = 0 the operands hold no value, but the
  // products are there, each an empty sum that sets its result to beta times itself)
  r.batchA = A.shape.matrices();
  r.batchB = B.shape.matrices();
  r.batchC = C.shape.matrices();
  r.batch = std::max(r.batchA, r.batchB);
  ABORT_IF((r.batchA != r.batch && r.batchA != 1) || (r.batchB != r.batch && r.batchB != 1) ||
               (r.batchC != r.batch && r.batchC != 1) || C.shape[-2] != r.d.m || C.shape[-1] != r.d.n,
           "gemmBatched: batches of {}, {} and result {} do not match", A.shape.toString(),
           B.shape.toString(), C.shape.toString());
  return r;
}

inline void crossEntropyShapes(Tensor logits, Tensor labels, Tensor mask, size_t rows) {
  ABORT_IF(labels.size() != rows, "crossEntropy: {} labels for {} rows of logits {}", labels.size(),
           rows, logits.shape.toString());
  ABORT_IF(!mask.empty() && mask.size() != rows, "crossEntropy: mask of {} for {} rows",
           mask.size(), rows);
}

inline void layerNormShapes(Tensor gamma, Tensor beta, size_t n) {
  ABORT_IF(!gamma.empty() && gamma.size() != n, "layerNorm: gamma {} for rows of {}",
           gamma.shape.toString(), n);
  ABORT_IF(!beta.empty() && beta.size() != n, "layerNorm: beta {} for rows of {}",
           beta.shape.toString(), n);
}

// An optimizer's parameters and gradients (or moving average) cover the same range.
inline void sameRange(Tensor params, Tensor grads, const char* what) {
  ABORT_IF(params.size() != grads.size(), "{}: {} parameters but {} gradients", what, params.size(),
           grads.size());
}

// `part` (extent len along axis) fits `whole` at offset along axis; returns both views.
inline std::pair<AxisView, AxisView> slab(Tensor whole, Tensor part, int axis, int offset) {
  AxisView w(whole.shape, axis), p(part.shape, axis);
  ABORT_IF(w.outer != p.outer || w.inner != p.inner || offset < 0 || offset + p.n > w.n,
           "Slice of {} at offset {} along axis {} does not fit {}", part.shape.toString(), offset,
           axis, whole.shape.toString());
  return {w, p};
}

// An index names a row of the table it gathers from or scatters into, and a cross-entropy label
// one of the logits' classes (GPU kernels report the same through their error slot, which the
// host reads when it next waits: gpu::Context::synchronize).
inline void rowInRange(int index, size_t rows) {
  ABORT_IF(index < 0 || size_t(index) >= rows, "Row index {} out of range for a table of {} rows", index, rows);
}
inline void labelInRange(int label, size_t classes) {
  ABORT_IF(label < 0 || size_t(label) >= classes, "crossEntropy: label {} out of range for {} classes", label,
           classes);
}

// Sparse selections index their values with 32 bits (on the wire and on both devices).
inline void indexableWith32Bits(size_t n) {
  ABORT_IF(n > size_t(UINT32_MAX), "Cannot index {} values with 32 bits", n);
}

inline void keepProbability(float keep) {
  ABORT_IF(!(keep > 0.f && keep <= 1.f), "Dropout keep probability {} is not in (0, 1]", keep);
}

// dropoutMultiply's operands: the keep probability, y and x alike, and maskRowOf (if any) an
// int32 mask row for each row of x.
inline void dropoutOperands(Tensor y, Tensor x, float keep, Tensor maskRowOf) {
  keepProbability(keep);
  ABORT_IF(y.size() != x.size(), "dropout: {} into {}", x.shape.toString(), y.shape.toString());
  ABORT_IF(!maskRowOf.empty() && (maskRowOf.type != Type::int32 || maskRowOf.size() != x.shape.rows()),
           "dropout: mask rows {} for the rows of {}", maskRowOf.shape.toString(), x.shape.toString());
}

// The extents of headsFromRows/rowsFromHeads: heads [B, H, T, d], rows [N, H*d], rowOf [B*T].
struct HeadDims {
  size_t B, H, T, d, N;
};
inline HeadDims headDims(Tensor heads, Tensor rows, Tensor rowOf) {
  ABORT_IF(heads.shape.rank() != 4 || rows.shape.rank() != 2 || rowOf.type != Type::int32,
           "Attention heads {} and rows {} need ranks 4 and 2 and int32 row numbers", heads.shape.toString(),
           rows.shape.toString());
  HeadDims h{size_t(heads.shape[0]), size_t(heads.shape[1]), size_t(heads.shape[2]), size_t(heads.shape[3]),
             size_t(rows.shape[0])};
  ABORT_IF(size_t(rows.shape[1]) != h.H * h.d || rowOf.size() != h.B * h.T,
           "Attention heads {} do not match rows {} with {} row numbers", heads.shape.toString(),
           rows.shape.toString(), rowOf.size());
  return h;
}

}  // namespace checks
}  // namespace marian
