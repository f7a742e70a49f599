#include "tensors/product_precision.h"

#include "common/error.h"
#include "tensors/cpu/cpu_features.h"

namespace marian {

namespace {
struct ThreadProducts {
  ProductType type = ProductType::float32;
  Tensor params, paramsLow;
};
thread_local ThreadProducts current;
}  // namespace

ProductType parseProductType(const std::string& name) {
  if(name == "float32")
    return ProductType::float32;
  if(name == "bfloat16")
    return ProductType::bfloat16;
  if(name == "float16")
    return ProductType::float16;
  ABORT("Unknown precision '{}' (float32, bfloat16 or float16)", name);
}

const char* productTypeName(ProductType t) {
  switch(t) {
    case ProductType::float32: return "float32";
    case ProductType::bfloat16: return "bfloat16";
    case ProductType::float16: return "float16";
  }
  return "?";
}

std::string cpuLacksProductType(ProductType t) {
  switch(t) {
    case ProductType::float32: return "";
    case ProductType::bfloat16:
      if(cpu::cpuFeatures().avx512Bf16 || cpu::cpuFeatures().amxBf16)
        return "";
      return "bfloat16 products on the CPU need AVX512-BF16 or AMX-BF16, which this CPU lacks "
             "(AMD Zen 4 and later, Intel Cooper Lake and Sapphire Rapids and later have them)";
    case ProductType::float16:
      return "float16 products run on GPUs only (--devices with a GPU); on the CPU use bfloat16";
  }
  return "unknown product type";
}

std::string gpuLacksProductType(ProductType t, int capability) {
  int needs = t == ProductType::float16 ? 70 : t == ProductType::bfloat16 ? 80 : 0;
  if(capability == 0 || capability >= needs)
    return "";
  return std::string(productTypeName(t)) + " products on a GPU need compute capability " + std::to_string(needs / 10) +
         "." + std::to_string(needs % 10) + (t == ProductType::float16 ? " (Volta)" : " (Ampere)") +
         " or later, and this GPU has " + std::to_string(capability / 10) + "." + std::to_string(capability % 10);
}

ProductPrecisionScope::ProductPrecisionScope(ProductType type, Tensor params, Tensor paramsLow)
    : type_(type), previousType_(current.type), previousParams_(current.params),
      previousParamsLow_(current.paramsLow) {
  ABORT_IF(!params.empty() && params.size() != paramsLow.size(),
           "Rounded parameter copy of {} values for {} parameters", paramsLow.size(), params.size());
  current = {type, params, paramsLow};
}

ProductPrecisionScope::~ProductPrecisionScope() {
  current = {previousType_, previousParams_, previousParamsLow_};
}

ProductType currentProductType() { return current.type; }

const void* roundedParamsCopy(const float* values, size_t count) {
  if(current.params.empty() || current.params.type != Type::float32)
    return nullptr;
  const float* base = current.params.f32();
  if(values < base || values + count > base + current.params.size())
    return nullptr;
  size_t offset = size_t(values - base);
  return static_cast<const char*>(current.paramsLow.data) + offset * sizeOf(current.paramsLow.type);
}

}  // namespace marian
