#pragma once
// defines: marian::Error, ABORT, ABORT_IF
// Every user-facing failure (bad input, corrupt file, impossible shape) throws Error with a
// message that names the thing at fault; main programs print it and exit non-zero.
#include <stdexcept>

#include "common/format.h"

namespace marian {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace marian

#define ABORT(...) throw ::marian::Error(::marian::format(__VA_ARGS__))
#define ABORT_IF(cond, ...) \
  do {                      \
    if(cond)                \
      ABORT(__VA_ARGS__);   \
  } while(0)
