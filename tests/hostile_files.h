#pragma once
// defines: what the hostile-file tests share: a per-process temporary path, whole-file writes and
// reads, and expectError, which checks that a loader's Error names what it should in printable text.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <typeinfo>
#include <vector>

#include "common/error.h"
#include "temp_paths.h"

namespace marian {
namespace hostile {

inline std::string temp(const std::string& name) {  // per process: ctest runs the cases in parallel
  return testpaths::tempPath("marian_hostile_", name);
}

inline void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs f, expects an Error whose message contains every one of `parts` and only printable text
// (a message built from freed memory shows up as bytes outside it).
template <class F>
std::string expectError(F f, std::vector<std::string> parts) {
  try {
    f();
  } catch(const Error& e) {
    std::string m = e.what();
    for(const std::string& p : parts)
      EXPECT_NE(m.find(p), std::string::npos) << "message '" << m << "' lacks '" << p << "'";
    for(char c : m)
      EXPECT_TRUE((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || (c & 0x80))
          << "message '" << m << "' holds byte " << int(uint8_t(c));
    return m;
  } catch(const std::exception& e) {
    ADD_FAILURE() << "expected marian::Error, got " << typeid(e).name() << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected an error naming " << (parts.empty() ? "" : parts[0]);
  return "";
}

}  // namespace hostile
}  // namespace marian
