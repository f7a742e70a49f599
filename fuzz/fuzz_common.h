#pragma once
// What every fuzz target shares: the input written to a file (the loaders read files), and the
// rule that the project's ABORT (a thrown marian::Error) is a normal outcome for a hostile file;
// anything else (a crash, another exception, a hang, a leak, an allocation over -malloc_limit_mb)
// is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "common/logging.h"

namespace marian::fuzz {

// A folder of this process's own (in memory where /dev/shm exists), removed at exit; the name
// lives on the heap, never destroyed, so that the exit handler can still read it.
inline const std::string& folder() {
  static const std::string* dir = [] {
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    auto* d = new std::string(base + "/marian-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(folder(), ec);
    });
    logging::configure("", /*quiet=*/true);  // the loaders' info lines would drown libFuzzer's
    return d;
  }();
  return *dir;
}

inline std::string writeFile(const std::string& name, const void* data, size_t size) {
  std::string path = folder() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if(!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

inline std::string writeFile(const std::string& name, const std::string& bytes) {
  return writeFile(name, bytes.data(), bytes.size());
}

// Runs f; an Error (what a hostile file must give) ends it normally.
template <class F>
void errorsAllowed(F f) {
  try {
    f();
  } catch(const Error&) {
  }
}

// A broken promise of the code under test (e.g. a round trip that does not hold): a crash that
// libFuzzer reports with its input.
#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if(!(cond)) {                                                                         \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                       \
    }                                                                                     \
  } while(0)

}  // namespace marian::fuzz
