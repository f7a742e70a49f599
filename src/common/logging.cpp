#include "common/logging.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "common/error.h"

namespace marian {
namespace logging {

namespace {
std::mutex mutex;
FILE* logFile = nullptr;
FILE* validLogFile = nullptr;
std::string logPath, validLogPath;
bool logFailed = false, validLogFailed = false;  // said once on stderr (a full disk)
bool quietStderr = false;
int minLevel = 2;  // info
std::string linePrefix;
thread_local bool hasThreadPrefix = false;
thread_local std::string threadLinePrefix;

const char* const kLevels[] = {"trace", "debug", "info", "warn", "err", "critical", "off"};

int levelOf(const std::string& name) {
  for(int i = 0; i < 7; ++i)
    if(name == kLevels[i])
      return i;
  return -1;
}

FILE* openLog(const std::string& path, const char* option) {
  FILE* f = std::fopen(path.c_str(), "a");
  ABORT_IF(!f, "Cannot open the log file '{}' ({}): {}", path, option, std::strerror(errno));
  return f;
}
}  // namespace

void setPrefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mutex);
  linePrefix = prefix;
}

void setThreadPrefix(const std::string& prefix) {
  hasThreadPrefix = true;
  threadLinePrefix = prefix;
}

std::string threadPrefix() {
  if(hasThreadPrefix)
    return threadLinePrefix;
  std::lock_guard<std::mutex> lock(mutex);
  return linePrefix;
}

void configure(const std::string& path, bool quiet, const std::string& level, const std::string& validPath) {
  int l = levelOf(level);
  ABORT_IF(l < 0, "--log-level must be trace, debug, info, warn, err, critical or off, not '{}'", level);
  std::lock_guard<std::mutex> lock(mutex);
  quietStderr = quiet;
  minLevel = l;
  if(!path.empty())
    logFile = openLog(logPath = path, "--log");
  if(!validPath.empty())
    validLogFile = openLog(validLogPath = validPath, "--valid-log");
}

void line(const std::string& msg, const char* level) {
  int l = levelOf(level);
  if(l >= 0 && l < minLevel)
    return;
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "[%Y-%m-%d %H:%M:%S]", &tm);
  std::lock_guard<std::mutex> lock(mutex);
  const std::string& prefix = hasThreadPrefix ? threadLinePrefix : linePrefix;
  if(!quietStderr) {
    std::fprintf(stderr, "%s %s%s\n", stamp, prefix.c_str(), msg.c_str());
    std::fflush(stderr);
  }
  for(FILE* f : {logFile, msg.rfind("[valid]", 0) == 0 ? validLogFile : nullptr})
    if(f) {
      bool failed = std::fprintf(f, "%s %s%s\n", stamp, prefix.c_str(), msg.c_str()) < 0 || std::fflush(f) != 0;
      bool& said = f == logFile ? logFailed : validLogFailed;
      if(failed && !said) {  // training goes on; the lines still reach stderr unless --quiet
        said = true;
        std::fprintf(stderr, "%s Warning: writing the log file '%s' failed: %s\n", stamp,
                     (f == logFile ? logPath : validLogPath).c_str(), std::strerror(errno));
        std::fflush(stderr);
      }
    }
}

}  // namespace logging
}  // namespace marian
