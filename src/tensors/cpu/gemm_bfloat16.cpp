// Products with bfloat16 inputs through oneDNN's matmul, whose gemm:jit kernels use AVX512-BF16
// (and AMX-BF16 where the CPU has it) and sum in float32. Debian's OpenBLAS 0.3.21 is built
// without its sbgemm (the header declares cblas_sbgemm, the library does not export it).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <map>
#include <tuple>
#include <vector>

#include "tensors/cpu/cpu_kernels.h"
#include "tensors/cpu/gemm_bfloat16.h"
#include "tensors/cpu/kernel_threads.h"
#include "tensors/cpu/product_split.h"
#include "tensors/cpu/thread_lease.h"
#include "tensors/kernel_checks.h"
#include "tensors/product_precision.h"

extern "C" void omp_set_num_threads(int);  // libgomp, which Debian's oneDNN runs on

namespace marian {
namespace cpu {

namespace {
using checks::MatDims;
using dnnl::memory;
constexpr auto kRuntime = DNNL_RUNTIME_DIM_VAL;

// Rounded operands of one thread, page-aligned: oneDNN's kernels read a misaligned operand at
// less than half the speed (a std::vector's 16 bytes: 114 against 347 GFLOP/s measured).
class Scratch {
public:
  uint16_t* reserve(size_t n) {
    if(n > capacity_) {
      size_t bytes = (n * sizeof(uint16_t) + 4095) / 4096 * 4096;
      data_.reset(static_cast<uint16_t*>(std::aligned_alloc(4096, bytes)));
      ABORT_IF(!data_, "Out of host memory for {} bfloat16 values", n);
      capacity_ = bytes / sizeof(uint16_t);
    }
    return data_.get();
  }

private:
  struct Free {
    void operator()(uint16_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint16_t, Free> data_;
  size_t capacity_ = 0;
};

// The primitives of one thread. Sizes and leading dimensions are given at run time, so one
// primitive per (transA, transB, beta) serves products of every size: creating one per shape
// costs 0.07-3.5 ms, a tenth of an update in new shapes. oneDNN runs single-threaded in each
// kernel thread, which splits the products as for BLAS.
struct ThreadProducts {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::tuple<bool, bool, float>, dnnl::matmul> primitives;
  Scratch scratchA, scratchB;

  dnnl::matmul& primitive(bool transA, bool transB, float beta) {
    auto key = std::make_tuple(transA, transB, beta);
    auto it = primitives.find(key);
    if(it != primitives.end())
      return it->second;
    auto strides = [](bool trans) { return trans ? memory::dims{kRuntime, 1, kRuntime} : memory::dims{kRuntime, kRuntime, 1}; };
    memory::dims dims{kRuntime, kRuntime, kRuntime};
    memory::desc a(dims, memory::data_type::bf16, strides(transA)), b(dims, memory::data_type::bf16, strides(transB)),
        c(dims, memory::data_type::f32, strides(false));
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
    if(beta != 0.f) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine);
      return primitives.emplace(key, dnnl::matmul(pd)).first->second;
    } catch(const dnnl::error& e) {
      ABORT("bfloat16 products: oneDNN has none for this CPU ({}); {}", e.what(),
            cpuLacksProductType(ProductType::bfloat16));
    }
  }
};

ThreadProducts& threadProducts() {
  bool fresh = false;
  ThreadProducts& products = ThreadLeases<ThreadProducts>::get(&fresh);
  if(fresh)
    omp_set_num_threads(1);  // (a setting of each thread)
  return products;
}

// A float32 operand's bfloat16 values: the parameters' rounded copy, or rounded now into scratch.
const uint16_t* bfloat16Operand(const Tensor& t, Scratch& scratch) {
  if(t.type == Type::bfloat16)
    return t.bf16();
  const float* values = t.f32();
  if(const void* copy = roundedParamsCopy(values, t.size()))
    return static_cast<const uint16_t*>(copy);
  uint16_t* out = scratch.reserve(t.size());
  convert(Tensor(out, t.shape, Type::bfloat16, t.device), t);
  return out;
}

struct Operands {
  const uint16_t *a, *b;
  float* c;
  memory::dim lda = 0, ldb = 0, ldc = 0;  // leading dimension of each
};

// [m x k] by [k x n] from o's pointers, on the calling thread (a batch of one for the primitive)
void product(const Operands& o, memory::dim m, memory::dim n, memory::dim k, bool transA, bool transB, float alpha,
             float beta) {
  if(m == 0 || n == 0)
    return;
  if(k == 0) {  // an empty sum: C = beta * C, 0 for beta 0 whatever C held (oneDNN refuses K = 0)
    for(memory::dim r = 0; r < m; ++r)
      for(memory::dim j = 0; j < n; ++j) {
        float& c = o.c[r * o.ldc + j];
        c = beta == 0.f ? 0.f : c * beta;
      }
    return;
  }
  ThreadProducts& p = threadProducts();
  auto desc = [](memory::data_type type, memory::dim rows, memory::dim cols, memory::dim ld, bool trans) {
    // (the batch stride of a batch of one: the matrix's span)
    return memory::desc({1, rows, cols}, type, trans ? memory::dims{cols * ld, 1, ld} : memory::dims{rows * ld, ld, 1});
  };
  memory a(desc(memory::data_type::bf16, m, k, o.lda, transA), p.engine, const_cast<uint16_t*>(o.a));
  memory b(desc(memory::data_type::bf16, k, n, o.ldb, transB), p.engine, const_cast<uint16_t*>(o.b));
  memory c(desc(memory::data_type::f32, m, n, o.ldc, false), p.engine, o.c);
  memory scale({{1}, memory::data_type::f32, {1}}, p.engine, &alpha);
  p.primitive(transA, transB, beta)
      .execute(p.stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}, {DNNL_ARG_ATTR_OUTPUT_SCALES, scale}});
  p.stream.wait();
}

}  // namespace

void gemmBfloat16(Tensor C, Tensor A, Tensor B, bool transA, bool transB, float alpha, float beta) {
  ABORT_IF(currentProductType() == ProductType::float16, "{}", cpuLacksProductType(ProductType::float16));
  ThreadProducts& p = threadProducts();
  Operands o{bfloat16Operand(A, p.scratchA), bfloat16Operand(B, p.scratchB), C.f32()};
  MatDims d = checks::gemmDims(C, A, B, transA, transB);
  o.lda = std::max(1, transA ? d.m : d.k), o.ldb = std::max(1, transB ? d.k : d.n), o.ldc = d.n;
  splitProduct(d, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    Operands part = o;
    part.a += transA ? r0 : r0 * o.lda;
    part.b += transB ? c0 * o.ldb : c0;
    part.c += r0 * o.ldc + c0;
    product(part, memory::dim(r1 - r0), memory::dim(c1 - c0), d.k, transA, transB, alpha, beta);
  });
}

}  // namespace cpu
}  // namespace marian
