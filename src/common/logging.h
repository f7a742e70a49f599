#pragma once
// defines: LOG(level, fmt, args...) — Marian-style "[YYYY-MM-DD hh:mm:ss] message" lines on
// stderr; level is info or warn (warnings are prefixed "Warning: ").
#include <string>

#include "common/format.h"

namespace marian {
namespace logging {
// thread-safe, one line per call, dropped when `level` is below --log-level
void line(const std::string& msg, const char* level = "info");
// Also append every line to logFile (--log) and the "[valid]" lines to validLogFile
// (--valid-log); quiet: nothing on stderr (--quiet); level: the least that is written
// (Marian's trace, debug, info, warn, err, critical, off). A file that cannot be opened or an
// unknown level is an error naming it.
void configure(const std::string& logFile, bool quiet, const std::string& level = "info",
               const std::string& validLogFile = "");
// Put in front of every message (multi-node: "[rank 2] ").
void setPrefix(const std::string& prefix);
// Put in front of the calling thread's messages instead (ranks that are threads of one process,
// --ranks-in-process); a thread a rank starts takes its starter's (threadPrefix()) along.
void setThreadPrefix(const std::string& prefix);
std::string threadPrefix();
inline std::string prefix(const char* level) {
  return std::string(level) == "warn" ? "Warning: " : "";
}
}  // namespace logging
}  // namespace marian

#define LOG(level, ...) \
  ::marian::logging::line(::marian::logging::prefix(#level) + ::marian::format(__VA_ARGS__), #level)
