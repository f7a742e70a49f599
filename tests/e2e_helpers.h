#pragma once
// defines: helpers for end-to-end tests that run the built programs on a small synthetic corpus
// and read their logs.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef MARIAN_BIN_DIR
#error "MARIAN_BIN_DIR must point at the built programs"
#endif

namespace e2e {

// A synthetic corpus (2,000 training pairs) made once per test binary.
inline std::string corpusDir() {
  static std::string d = [] {
    std::string path = ::testing::TempDir() + "marian_e2e_" + std::to_string(getpid());
    std::system(("rm -rf " + path + " && mkdir -p " + path).c_str());
    std::string cmd = "/usr/bin/python3 " MARIAN_SOURCE_DIR "/scripts/make-synthetic-corpus " + path +
                      " --train 2000 > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return path;
  }();
  return d;
}

struct RunResult {
  int status;
  std::string log;
};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The options of a tiny transformer on the synthetic corpus, with the model in its own folder.
inline std::string tinyModelOptions(const std::string& modelDir) {
  std::string d = corpusDir();
  return "--train-sets " + d + "/train.src " + d + "/train.trg --vocabs " + d + "/vocab.src.yml " + d +
         "/vocab.trg.yml --model " + modelDir +
         "/model.npz --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 "
         "--mini-batch 16 --maxi-batch 10 --learn-rate 0.003 --disp-freq 5 --seed 7 --overwrite ";
}

// Runs `launcher marian OPTIONS extra` with the log in the model folder `name`.
inline RunResult run(const std::string& name, const std::string& extra, bool fresh = true,
                     const std::string& launcher = "") {
  std::string m = corpusDir() + "/" + name;
  if(fresh)
    std::system(("rm -rf " + m + " && mkdir -p " + m).c_str());
  std::string cmd = launcher + std::string(MARIAN_BIN_DIR) + "/marian " + tinyModelOptions(m) + extra +
                    " > " + m + "/log.txt 2>&1";
  int status = std::system(cmd.c_str());
  return {status, readFile(m + "/log.txt")};
}

// (update, cost text) of every training line of rank 0 (lines without a "[rank N]" prefix)
inline std::vector<std::pair<int, std::string>> costs(const std::string& log) {
  std::vector<std::pair<int, std::string>> out;
  std::regex line("\\] Ep\\. \\d+ : Up\\. (\\d+) : Sen\\. [0-9,]+ : Cost ([0-9.]+)");
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
    out.push_back({std::stoi((*it)[1]), (*it)[2]});
  return out;
}

inline std::vector<double> validCE(const std::string& log) {
  std::vector<double> out;
  std::regex line("\\[valid\\] Ep\\. \\d+ : Up\\. \\d+ : cross-entropy : ([0-9.]+)");
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

}  // namespace e2e
