#pragma once
// defines: the operators a model is written with. Each returns a new node of the graph its
// arguments belong to; shapes are checked here, at build time, with errors naming the shapes.
#include <vector>

#include "graph/expression_graph.h"

namespace marian {

// --- element-wise, numpy broadcasting (ops_elementwise.cpp) -----------------------------------
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr maximum(Expr a, Expr b);
Expr minimum(Expr a, Expr b);
// scores where mask != 0, a large negative score elsewhere (attention masking)
Expr maskFill(Expr scores, Expr mask);

Expr scaleShift(Expr x, float scale, float shift);  // scale * x + shift
Expr operator*(float s, Expr x);
Expr operator*(Expr x, float s);
Expr operator+(Expr x, float s);
Expr operator-(Expr x, float s);
Expr operator-(Expr x);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr square(Expr x);
Expr sigmoid(Expr x);
Expr tanh(Expr x);
Expr relu(Expr x);
Expr swish(Expr x);
Expr gelu(Expr x);  // 0.5 x (1 + erf(x / sqrt 2)), as Marian

// --- matrix products (ops_matmul.cpp) ---------------------------------------------------------
// a [..., k] as a matrix of rows, times b [k, n]: [..., n]. scale multiplies the product.
Expr dot(Expr a, Expr b, bool transA = false, bool transB = false, float scale = 1.f);
// batched: a [..., m, k] x b [..., k, n] -> [..., m, n]; a batch of 1 broadcasts.
Expr bdot(Expr a, Expr b, bool transA = false, bool transB = false, float scale = 1.f);
// x W + b (x W^T + b when transW), with b [n] or [1, n]
Expr affine(Expr x, Expr W, Expr b, bool transW = false);

// --- reductions along one axis, kept with extent 1 (ops_reduce.cpp) -----------------------------
Expr sum(Expr x, int axis);
Expr mean(Expr x, int axis);
Expr max(Expr x, int axis);

// --- along the last axis (ops_softmax.cpp, ops_loss.cpp, ops_layer_norm.cpp) ---------------------
Expr softmax(Expr x);
Expr logSoftmax(Expr x);
// Per-position cross-entropy of logits [..., V] against int32 labels [...]: shape [...].
// mask (float [...], 1 = real token, 0 = padding) may be null; smoothing is label smoothing.
Expr crossEntropy(Expr logits, Expr labels, Expr mask = nullptr, float smoothing = 0.f);
// gamma and beta [n] may be null
Expr layerNorm(Expr x, Expr gamma, Expr beta, float eps = 1e-6f);

// --- indexing and layout (ops_gather.cpp, ops_shape.cpp) ---------------------------------------
// table [V, d] looked up at int32 indices of any shape S: S + [d]
Expr rows(Expr table, Expr indices);
Expr reshape(Expr x, const Shape& shape);
Expr transpose(Expr x, const std::vector<int>& perm);
Expr concat(const std::vector<Expr>& xs, int axis);
Expr slice(Expr x, int axis, int begin, int end);  // [begin, end) along axis
std::vector<Expr> split(Expr x, int axis, int parts);

// --- attention heads of the real positions (ops_heads.cpp) ---------------------------------------
// rows [N, H*d] of the real positions -> heads [batch, H, T, d] of every position, zeros at padding;
// rowOf int32 [batch * T] is the row of position (b, t), -1 for padding.
Expr toHeads(Expr rows, Expr rowOf, int batch, int heads);
// heads [B, H, T, d] -> rows [rows, H*d]; rowOf must name each of the rows exactly once.
Expr fromHeads(Expr heads, Expr rowOf, int rows);

// --- regularisation (ops_dropout.cpp) ---------------------------------------------------------
// Drops with probability `prob` and scales the rest by 1/(1-prob). A maskShape that broadcasts
// onto x shares one mask along its axes of extent 1 (e.g. the same units dropped at every time
// step). The mask comes from the graph's seed: the same build gives the same mask.
Expr dropout(Expr x, float prob);
Expr dropout(Expr x, float prob, const Shape& maskShape);
// Row r of x [.., n] takes row maskRowOf[r] (int32, one per row of x) of one mask [.., n]: rows
// naming the same mask row drop the same units (the transformer's positions, shared by the
// sentences of a batch). The mask is drawn again in backward, never stored.
Expr dropout(Expr x, float prob, Expr maskRowOf);
// The mask alone: 0 with probability `prob`, else 1/(1-prob); for masks a model reuses itself
// (Marian's graph->dropoutMask). A leaf without gradient.
Expr dropoutMask(ExpressionGraph& g, const Shape& shape, float prob);

}  // namespace marian
