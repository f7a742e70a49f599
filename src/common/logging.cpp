#include "common/logging.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace marian {
namespace logging {

void line(const std::string& msg) {
  static std::mutex mutex;
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "[%Y-%m-%d %H:%M:%S]", &tm);
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "%s %s\n", stamp, msg.c_str());
  std::fflush(stderr);
}

}  // namespace logging
}  // namespace marian
