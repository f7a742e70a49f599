#pragma once
// defines: marian::format — "{}" placeholders filled from stream-printable arguments.
// (g++ 12 has no <format>; this keeps error and log messages readable without a dependency.)
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

}  // namespace marian
