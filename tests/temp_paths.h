#pragma once
// defines: tempPath — a test process's temporary path, and its removal when the process ends.
// ctest runs every case in a process of its own (thousands per suite run), so what a process
// writes under ::testing::TempDir() is named after its pid and removed at exit, unless
// MARIAN_KEEP_TEST_FILES is set (to look at a failure).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace testpaths {

struct RemovedAtExit {
  std::vector<std::string> globs;
  ~RemovedAtExit() {
    if(std::getenv("MARIAN_KEEP_TEST_FILES"))
      return;
    for(const std::string& glob : globs)
      std::system(("rm -rf " + glob).c_str());
  }
};

// TempDir()/<prefix><pid>, removed with everything that begins with it when the process ends.
inline std::string processPath(const std::string& prefix) {
  static RemovedAtExit removed;
  std::string path = ::testing::TempDir() + prefix + std::to_string(getpid());
  std::string glob = path + "*";
  bool known = false;
  for(const std::string& g : removed.globs)
    known = known || g == glob;
  if(!known)
    removed.globs.push_back(glob);
  return path;
}

// TempDir()/<prefix><pid>_<name> (cases of one binary run in parallel processes).
inline std::string tempPath(const std::string& prefix, const std::string& name) {
  return processPath(prefix) + "_" + name;
}

}  // namespace testpaths
