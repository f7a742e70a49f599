#pragma once
// defines: marian::Type (element types), sizeOf, typeName
#include <cstddef>

namespace marian {

enum class Type { float32, int32 };

inline size_t sizeOf(Type t) { return 4; }
inline const char* typeName(Type t) { return t == Type::float32 ? "float32" : "int32"; }

}  // namespace marian
