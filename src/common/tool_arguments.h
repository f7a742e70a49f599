#pragma once
// defines: toolArguments — the "--name value" pairs of the small command-line tools
// (marian-evaluate, marian-commbench), which take a few options of their own, not Marian's set.
#include <map>
#include <set>
#include <string>

#include "common/error.h"

namespace marian {

// name -> value for every pair on the command line; a name not in `known`, or one without a
// value, is an error that names it and shows `usage`.
inline std::map<std::string, std::string> toolArguments(int argc, char** argv, const std::set<std::string>& known,
                                                        const std::string& usage) {
  std::map<std::string, std::string> values;
  for(int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    ABORT_IF(!known.count(name), "Unknown option '{}'; use {}", name, usage);
    ABORT_IF(i + 1 >= argc, "Option '{}' needs a value; use {}", name, usage);
    values[name] = argv[++i];
  }
  return values;
}

}  // namespace marian
