#pragma once
// defines: toolArguments and toolNumber — the "--name value" pairs of the small command-line
// tools (marian-vocab, marian-evaluate, marian-commbench), which take a few options of their
// own, not Marian's set.
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "common/error.h"

namespace marian {

// name -> value for every pair on the command line; --help or -h maps "--help" to "" (the tool
// prints its usage and exits with 0). A name not in `known`, or one without a value, is an
// error that names it and shows `usage`.
inline std::map<std::string, std::string> toolArguments(int argc, char** argv, const std::set<std::string>& known,
                                                        const std::string& usage) {
  std::map<std::string, std::string> values;
  for(int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    if(name == "--help" || name == "-h")
      return {{"--help", ""}};
    ABORT_IF(!known.count(name), "Unknown option '{}'; use {}", name, usage);
    ABORT_IF(i + 1 >= argc, "Option '{}' needs a value; use {}", name, usage);
    values[name] = argv[++i];
  }
  return values;
}

// The value of a numeric tool option, which must be a number in [lo, hi] (whole when `whole`).
inline double toolNumber(const std::string& name, const std::string& value, double lo, double hi, bool whole) {
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  bool ok = !value.empty() && *end == '\0' && std::isfinite(v) && (!whole || v == std::floor(v));
  ABORT_IF(!ok, "Option '{}': '{}' is not {}", name, value, whole ? "a whole number" : "a number");
  ABORT_IF(v < lo || v > hi, "Option '{}': {} is out of range: it must be between {} and {}", name, value, lo, hi);
  return v;
}

}  // namespace marian
