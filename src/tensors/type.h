#pragma once
// defines: marian::Type (element types), sizeOf, typeName
#include <cstddef>

namespace marian {

enum class Type { float32, int32 };

inline size_t sizeOf(Type t) { return 4; }
inline const char* typeName(Type t) { return t == Type::float32 ? "float32" : "int32"; }
// numpy's dtype string for .npz files
inline const char* npyDescr(Type t) { return t == Type::float32 ? "<f4" : "<i4"; }

}  // namespace marian
