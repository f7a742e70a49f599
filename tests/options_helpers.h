#pragma once
// What the options tests share: per-process temporary files and parsing a training command line
// (with two existing corpus files, so that its file checks pass).
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/options.h"
#include "temp_paths.h"

namespace marian::optionstest {

// per process: ctest runs each case in a process of its own, in parallel
inline std::string temp(const std::string& name) {
  return testpaths::tempPath("marian_opt_", name);
}

inline void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Two existing corpus files so that training-mode parsing passes its file checks.
inline std::vector<std::string> corpusArgs() {
  write(temp("a.src"), "x\n");
  write(temp("a.trg"), "y\n");
  return {"--train-sets", temp("a.src"), temp("a.trg")};
}

inline ParsedOptions parsed(std::vector<std::string> args) {
  std::vector<std::string> all = {"marian"};
  for(const std::string& a : corpusArgs())
    all.push_back(a);
  all.insert(all.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for(const std::string& a : all)
    argv.push_back(a.c_str());
  return parseOptions(int(argv.size()), argv.data(), ProgramMode::training);
}

inline Options parse(std::vector<std::string> args) { return parsed(std::move(args)).options; }

inline std::string errorOf(std::vector<std::string> args) {
  try {
    parse(args);
  } catch(const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace marian::optionstest
