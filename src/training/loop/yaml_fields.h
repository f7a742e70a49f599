#pragma once
// defines: yamlfield::get, yamlfield::requireMap — typed fields of the YAML maps a resume reads
// (the progress file, a checkpoint's special:state.yml). Every error names the origin (the file),
// the key and its line, and what the value must be: a corrupt or hand-edited file is an error,
// never a crash or a silently wrong resume.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <type_traits>

#include "common/error.h"

namespace marian {
namespace yamlfield {

inline std::string lineOf(const YAML::Node& node) {
  if(!node.IsDefined())
    return "";
  YAML::Mark m = node.Mark();
  return m.is_null() ? "" : format(" (line {})", m.line + 1);
}

inline std::string describe(const YAML::Node& node) {
  if(!node.IsDefined() || node.IsNull())
    return "empty";
  if(node.IsScalar()) {
    std::string s = node.Scalar();
    return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'";
  }
  return node.IsMap() ? "a map" : "a sequence";
}

template <class T>
const char* kind() {
  if constexpr(std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr(std::is_floating_point_v<T>)
    return "a number";
  else if constexpr(std::is_unsigned_v<T>)
    return "a non-negative integer";
  else if constexpr(std::is_integral_v<T>)
    return "an integer";
  else
    return "a string";
}

// `node`, which must be a map with each key once (yaml-cpp keeps both of a duplicated key and
// finds the first); `key` names it in errors ("" for the whole file).
inline void requireMap(const YAML::Node& node, const std::string& origin, const std::string& key) {
  ABORT_IF(!node.IsDefined() || !node.IsMap(), "{}: {} must be a map, not {}{}", origin,
           key.empty() ? std::string("the file") : "key '" + key + "'", describe(node), lineOf(node));
  std::set<std::string> seen;
  for(auto it = node.begin(); it != node.end(); ++it) {
    ABORT_IF(!it->first.IsScalar(), "{}: a key{}{} is not a name but {}", origin,
             key.empty() ? std::string() : " in '" + key + "'", lineOf(it->first), describe(it->first));
    ABORT_IF(!seen.insert(it->first.Scalar()).second, "{}: key '{}{}'{} appears twice", origin,
             key.empty() ? std::string() : key + ".", it->first.Scalar(), lineOf(it->first));
  }
}

// The value of a scalar node as T; `name` is the key's full name for errors.
template <class T>
T value(const YAML::Node& node, const std::string& origin, const std::string& name) {
  ABORT_IF(!node.IsDefined() || node.IsNull(), "{}: key '{}'{} is missing", origin, name, lineOf(node));
  T v{};
  bool ok = node.IsScalar();
  if(ok) {
    try {
      v = node.as<T>();
    } catch(const YAML::Exception&) {
      ok = false;
    }
  }
  ABORT_IF(!ok, "{}: key '{}'{} must be {}, not {}", origin, name, lineOf(node), kind<T>(), describe(node));
  return v;
}

// map[key] as T (map checked by requireMap); `prefix` names the enclosing key ("validators.bleu").
template <class T>
T get(const YAML::Node& map, const std::string& key, const std::string& origin, const std::string& prefix = "") {
  const YAML::Node& constMap = map;  // a lookup that never inserts
  return value<T>(constMap[key], origin, prefix.empty() ? key : prefix + "." + key);
}

}  // namespace yamlfield
}  // namespace marian
