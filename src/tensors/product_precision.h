#pragma once
// defines: marian::ProductType (the element type matrix products read their inputs in; sums and
// results stay float32), the thread's current one (ProductPrecisionScope), and whether this
// machine's hardware runs a type at speed. Set by the expression graph around its forward and
// backward (--precision); the CPU and GPU products read it.
#include <string>

#include "tensors/tensor.h"

namespace marian {

enum class ProductType { float32, bfloat16, float16 };

// "float32", "bfloat16", "float16" (Marian's names); anything else is an error naming it.
ProductType parseProductType(const std::string& name);
const char* productTypeName(ProductType t);

// Empty when products of type t run on this machine's CPUs in hardware; otherwise why not
// (bfloat16 needs AVX512-BF16 or AMX-BF16; float16 products are GPU-only here).
std::string cpuLacksProductType(ProductType t);
// The same for a GPU of compute capability `capability` (major * 10 + minor; 0: unknown, not
// refused): float16 products need tensor cores (7.0, Volta), bfloat16 ones Ampere's (8.0).
std::string gpuLacksProductType(ProductType t, int capability);

// The product type of this thread's products from construction to destruction (restoring the
// previous one). `params`, a float32 buffer, and `paramsLow`, its copy in the product type made by
// the caller, let products read a parameter's rounded copy instead of rounding it again: the
// weights are rounded once per forward, not once per product.
class ProductPrecisionScope {
public:
  explicit ProductPrecisionScope(ProductType type, Tensor params = {}, Tensor paramsLow = {});
  ~ProductPrecisionScope();
  ProductPrecisionScope(const ProductPrecisionScope&) = delete;
  ProductPrecisionScope& operator=(const ProductPrecisionScope&) = delete;

private:
  ProductType type_, previousType_;
  Tensor previousParams_, previousParamsLow_;
};

ProductType currentProductType();
// The rounded copy of `count` float32 values at `values` when they lie in the scope's parameters
// (same offset in paramsLow); nullptr otherwise.
const void* roundedParamsCopy(const float* values, size_t count);

}  // namespace marian
