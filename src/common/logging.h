#pragma once
// defines: LOG(level, fmt, args...) — Marian-style "[YYYY-MM-DD hh:mm:ss] message" lines on
// stderr; level is info or warn (warnings are prefixed "Warning: ").
#include <string>

#include "common/format.h"

namespace marian {
namespace logging {
void line(const std::string& msg);  // thread-safe, one line per call
// Also append every line to this file (--log); quiet: nothing on stderr (--quiet).
void configure(const std::string& logFile, bool quiet);
// Put in front of every message (multi-node: "[rank 2] ").
void setPrefix(const std::string& prefix);
inline std::string prefix(const char* level) {
  return std::string(level) == "warn" ? "Warning: " : "";
}
}  // namespace logging
}  // namespace marian

#define LOG(level, ...) ::marian::logging::line(::marian::logging::prefix(#level) + ::marian::format(__VA_ARGS__))
