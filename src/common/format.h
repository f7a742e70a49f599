#pragma once
// defines: marian::format — "{}" placeholders filled from stream-printable arguments.
// (g++ 12 has no <format>; this keeps error and log messages readable without a dependency.)
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

namespace marian {

namespace detail {
inline void formatRest(std::ostringstream& out, std::string_view fmt) { out << fmt; }

template <class T, class... Rest>
void formatRest(std::ostringstream& out, std::string_view fmt, const T& first, const Rest&... rest) {
  size_t pos = fmt.find("{}");
  if(pos == std::string_view::npos) {  // more arguments than placeholders: append them
    out << fmt << ' ' << first;
    formatRest(out, std::string_view(), rest...);
    return;
  }
  out << fmt.substr(0, pos) << first;
  formatRest(out, fmt.substr(pos + 2), rest...);
}
}  // namespace detail

template <class... Args>
std::string format(std::string_view fmt, const Args&... args) {
  std::ostringstream out;
  detail::formatRest(out, fmt, args...);
  return out.str();
}

// one number through a printf format: formatNumber("%.2f", x)
inline std::string formatNumber(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// 32000 -> "32,000": counts in the log, as Marian writes them
inline std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for(int i = int(s.size()) - 3; i > 0; i -= 3)
    s.insert(size_t(i), ",");
  return s;
}

// 1536 -> "1.50KB": the byte counts of the display line
inline std::string humanBytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB"};
  int u = 0;
  while(b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f%s", b, units[u]);
  return buf;
}

}  // namespace marian
