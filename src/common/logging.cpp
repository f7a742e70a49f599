#include "common/logging.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace marian {
namespace logging {

namespace {
std::mutex mutex;
FILE* logFile = nullptr;
bool quietStderr = false;
std::string linePrefix;
}  // namespace

void setPrefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mutex);
  linePrefix = prefix;
}

void configure(const std::string& path, bool quiet) {
  std::lock_guard<std::mutex> lock(mutex);
  quietStderr = quiet;
  if(!path.empty()) {
    logFile = std::fopen(path.c_str(), "a");
    if(!logFile)
      std::fprintf(stderr, "Warning: cannot open log file '%s'\n", path.c_str());
  }
}

void line(const std::string& msg) {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "[%Y-%m-%d %H:%M:%S]", &tm);
  std::lock_guard<std::mutex> lock(mutex);
  if(!quietStderr) {
    std::fprintf(stderr, "%s %s%s\n", stamp, linePrefix.c_str(), msg.c_str());
    std::fflush(stderr);
  }
  if(logFile) {
    std::fprintf(logFile, "%s %s%s\n", stamp, linePrefix.c_str(), msg.c_str());
    std::fflush(logFile);
  }
}

}  // namespace logging
}  // namespace marian
