#pragma once
// defines: the helpers of the data tests: a temporary path per process (ctest runs each case in
// its own process), writing plain and gzip files, and the message of the Error a call throws.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <string>

#include "common/error.h"
#include "temp_paths.h"

namespace marian {
namespace testdata {

inline std::string temp(const std::string& prefix, const std::string& name) {
  return testpaths::tempPath(prefix, name);
}

inline void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

inline void writeGz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
}

// "" when f throws nothing
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch(const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace testdata
}  // namespace marian
