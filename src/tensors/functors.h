#pragma once
// defines: UnaryOp, BinaryOp, ReduceOp and their functors (value and derivative side by side),
// plus visitUnary/visitBinary that turn a runtime op into a functor type, so one templated
// loop per backend serves every element-wise operator. Functors are HOST_DEVICE so that the
// CUDA kernels instantiate the very same definitions.
#include <cmath>

#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#include "tensors/cpu/fast_exp.h"
#endif

namespace marian {

enum class UnaryOp { Neg, Exp, Log, Sqrt, Square, Sigmoid, Tanh, Relu, Swish, Gelu, ScaleShift };
enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum, MaskFill };
enum class ReduceOp { Sum, Mean, Max };

// Attention scores at masked positions: large but finite, so a fully masked row gives a uniform
// softmax instead of NaN.
constexpr float kMaskedScore = -1e9f;

namespace functors {
// The bodies below differ between nvcc and the host compiler (expf vs fastExp): an inline
// namespace per compiler gives them different names, so a program linking both kinds of
// objects never merges the two definitions.
#ifdef __CUDACC__
inline namespace cuda_compiled {
#else
inline namespace host_compiled {
#endif

// exp of the backend: CUDA's expf on the GPU, the vectorisable fastExp on the CPU
HOST_DEVICE inline float exponential(float x) {
#ifdef __CUDACC__
  return expf(x);
#else
  return cpu::fastExp(x);
#endif
}

HOST_DEVICE inline float sigmoid(float x) {
  // exp of a non-positive argument only, so it never overflows
  float z = exponential(-std::fabs(x));
  float s = 1.f / (1.f + z);
  return x >= 0 ? s : 1.f - s;
}

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|)
HOST_DEVICE inline float tanhApprox(float x) {
  float e = exponential(-2.f * std::fabs(x));
  float t = (1.f - e) / (1.f + e);
  return x >= 0 ? t : -t;
}

// Unary functors: y = fwd(x); dx = dy * grad(x, y). `p0`, `p1` carry ScaleShift's constants.
struct Neg      { float p0, p1; HOST_DEVICE float fwd(float x) const { return -x; }
                                HOST_DEVICE float grad(float, float) const { return -1.f; } };
struct Exp      { float p0, p1; HOST_DEVICE float fwd(float x) const { return exponential(x); }
                                HOST_DEVICE float grad(float, float y) const { return y; } };
struct Log      { float p0, p1; HOST_DEVICE float fwd(float x) const { return logf(x); }
                                HOST_DEVICE float grad(float x, float) const { return 1.f / x; } };
struct Sqrt     { float p0, p1; HOST_DEVICE float fwd(float x) const { return sqrtf(x); }
                                HOST_DEVICE float grad(float, float y) const { return 0.5f / y; } };
struct Square   { float p0, p1; HOST_DEVICE float fwd(float x) const { return x * x; }
                                HOST_DEVICE float grad(float x, float) const { return 2.f * x; } };
struct Sigmoid  { float p0, p1; HOST_DEVICE float fwd(float x) const { return sigmoid(x); }
                                HOST_DEVICE float grad(float, float y) const { return y * (1.f - y); } };
struct Tanh     { float p0, p1; HOST_DEVICE float fwd(float x) const { return tanhApprox(x); }
                                HOST_DEVICE float grad(float, float y) const { return 1.f - y * y; } };
// relu's gradient from its output (y > 0 exactly where x > 0): the wide input of a feed-forward
// layer's activation need not be kept for backward, its output is kept anyway (the next product)
struct Relu     { float p0, p1; HOST_DEVICE float fwd(float x) const { return x > 0.f ? x : 0.f; }
                                HOST_DEVICE float grad(float, float y) const { return y > 0.f ? 1.f : 0.f; } };
// swish(x) = x * sigmoid(x);  d/dx = s + x * s * (1 - s)
struct Swish    { float p0, p1; HOST_DEVICE float fwd(float x) const { return x * sigmoid(x); }
                                HOST_DEVICE float grad(float x, float) const {
                                  float s = sigmoid(x); return s + x * s * (1.f - s); } };
// gelu(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), exactly as Marian's since v1.12.3 (before, it
// was x sigmoid(1.702 x)); d/dx = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
struct Gelu     { float p0, p1; HOST_DEVICE float fwd(float x) const { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }
                                HOST_DEVICE float grad(float x, float) const {
                                  return 0.5f * (1.f + erff(x * 0.70710678f)) + x * 0.39894228f * expf(-0.5f * x * x); } };
// y = p0 * x + p1
struct ScaleShift { float p0, p1; HOST_DEVICE float fwd(float x) const { return p0 * x + p1; }
                                  HOST_DEVICE float grad(float, float) const { return p0; } };

// Binary functors: y = fwd(a, b); da = dy * da(a, b); db = dy * db(a, b).
struct Add { HOST_DEVICE float fwd(float a, float b) const { return a + b; }
             HOST_DEVICE float da(float, float) const { return 1.f; }
             HOST_DEVICE float db(float, float) const { return 1.f; } };
struct Sub { HOST_DEVICE float fwd(float a, float b) const { return a - b; }
             HOST_DEVICE float da(float, float) const { return 1.f; }
             HOST_DEVICE float db(float, float) const { return -1.f; } };
struct Mul { HOST_DEVICE float fwd(float a, float b) const { return a * b; }
             HOST_DEVICE float da(float, float b) const { return b; }
             HOST_DEVICE float db(float a, float) const { return a; } };
struct Div { HOST_DEVICE float fwd(float a, float b) const { return a / b; }
             HOST_DEVICE float da(float, float b) const { return 1.f / b; }
             HOST_DEVICE float db(float a, float b) const { return -a / (b * b); } };
// ties send the gradient to `a`
struct Maximum { HOST_DEVICE float fwd(float a, float b) const { return a >= b ? a : b; }
                 HOST_DEVICE float da(float a, float b) const { return a >= b ? 1.f : 0.f; }
                 HOST_DEVICE float db(float a, float b) const { return a >= b ? 0.f : 1.f; } };
struct Minimum { HOST_DEVICE float fwd(float a, float b) const { return a <= b ? a : b; }
                 HOST_DEVICE float da(float a, float b) const { return a <= b ? 1.f : 0.f; }
                 HOST_DEVICE float db(float a, float b) const { return a <= b ? 0.f : 1.f; } };
// a where mask b is non-zero, kMaskedScore elsewhere; the mask gets no gradient
struct MaskFill { HOST_DEVICE float fwd(float a, float b) const { return b != 0.f ? a : kMaskedScore; }
                  HOST_DEVICE float da(float, float b) const { return b != 0.f ? 1.f : 0.f; }
                  HOST_DEVICE float db(float, float) const { return 0.f; } };

}  // inline namespace
}  // namespace functors

template <class Visit>
void visitUnary(UnaryOp op, float p0, float p1, Visit&& visit) {
  using namespace functors;
  switch(op) {
    case UnaryOp::Neg:        visit(Neg{p0, p1}); break;
    case UnaryOp::Exp:        visit(Exp{p0, p1}); break;
    case UnaryOp::Log:        visit(Log{p0, p1}); break;
    case UnaryOp::Sqrt:       visit(Sqrt{p0, p1}); break;
    case UnaryOp::Square:     visit(Square{p0, p1}); break;
    case UnaryOp::Sigmoid:    visit(Sigmoid{p0, p1}); break;
    case UnaryOp::Tanh:       visit(Tanh{p0, p1}); break;
    case UnaryOp::Relu:       visit(Relu{p0, p1}); break;
    case UnaryOp::Swish:      visit(Swish{p0, p1}); break;
    case UnaryOp::Gelu:       visit(Gelu{p0, p1}); break;
    case UnaryOp::ScaleShift: visit(ScaleShift{p0, p1}); break;
  }
}

template <class Visit>
void visitBinary(BinaryOp op, Visit&& visit) {
  using namespace functors;
  switch(op) {
    case BinaryOp::Add:      visit(Add{}); break;
    case BinaryOp::Sub:      visit(Sub{}); break;
    case BinaryOp::Mul:      visit(Mul{}); break;
    case BinaryOp::Div:      visit(Div{}); break;
    case BinaryOp::Maximum:  visit(Maximum{}); break;
    case BinaryOp::Minimum:  visit(Minimum{}); break;
    case BinaryOp::MaskFill: visit(MaskFill{}); break;
  }
}

}  // namespace marian
