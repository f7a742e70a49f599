#pragma once
// defines: marian::Type (element types), sizeOf, typeName
#include <cstddef>

namespace marian {

// bfloat16: float32's sign, exponent and top 7 mantissa bits (the rounded inputs of products)
enum class Type { float32, int32, bfloat16 };

inline size_t sizeOf(Type t) { return t == Type::bfloat16 ? 2 : 4; }
inline const char* typeName(Type t) {
  return t == Type::float32 ? "float32" : t == Type::int32 ? "int32" : "bfloat16";
}

}  // namespace marian
