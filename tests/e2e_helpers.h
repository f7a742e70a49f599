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

#include "temp_paths.h"

#ifndef MARIAN_BIN_DIR
#error "MARIAN_BIN_DIR must point at the built programs"
#endif

namespace e2e {

// A synthetic corpus (2,000 training pairs) made once per test process, with the runs' folders.
inline std::string corpusDir() {
  static std::string d = [] {
    std::string path = testpaths::processPath("marian_e2e_");
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

// The lines of a text (a file's, read with readFile), without their endings.
inline std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for(std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

// The " ||| "-separated fields of a decoder's or scorer's line (Marian's n-best format).
inline std::vector<std::string> fieldsOf(const std::string& line) {
  std::vector<std::string> fields;
  size_t from = 0;
  for(size_t at; (at = line.find(" ||| ", from)) != std::string::npos; from = at + 5)
    fields.push_back(line.substr(from, at - from));
  fields.push_back(line.substr(from));
  return fields;
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

// Whether a failed run on a GPU failed because none can run here (a build without the GPU backend,
// or no GPU visible: the errors that say so). The GPU tests skip then, and fail on any other failure.
inline bool noGpuHere(const std::string& log) {
  return log.find("has no GPU backend") != std::string::npos || log.find("GPU(s) are visible") != std::string::npos;
}

// (update, field) of every training line of rank 0 (lines without a "[rank N]" prefix) that
// `line` matches, its first group the update and its second the field
inline std::vector<std::pair<int, std::string>> displayed(const std::string& log, const std::regex& line) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream lines(log);
  std::smatch m;
  for(std::string l; std::getline(lines, l);)
    if(l.find("[rank ") == std::string::npos && std::regex_search(l, m, line))
      out.push_back({std::stoi(m[1]), m[2]});
  return out;
}

// (update, cost text) of every training line of rank 0
inline std::vector<std::pair<int, std::string>> costs(const std::string& log) {
  return displayed(log, std::regex("\\] Ep\\. \\d+ : Up\\. (\\d+) : Sen\\. [0-9,]+ : Cost ([0-9.]+)"));
}

// the gNorm of rank 0's display lines
inline std::vector<std::string> gradientNorms(const std::string& log) {
  std::vector<std::string> out;
  for(const auto& [update, norm] : displayed(log, std::regex("\\] Ep\\. \\d+ : Up\\. (\\d+) : .* : gNorm ([0-9.]+)")))
    out.push_back(norm);
  return out;
}

// (update, L.r. text) of every training line of rank 0 (--lr-report)
inline std::vector<std::pair<int, std::string>> rates(const std::string& log) {
  return displayed(log, std::regex("\\] Ep\\. \\d+ : Up\\. (\\d+) : .* L\\.r\\. ([0-9.e+-]+)"));
}

// --valid-sets of the synthetic corpus
inline std::string validation() {
  std::string d = corpusDir();
  return " --valid-sets " + d + "/valid.src " + d + "/valid.trg ";
}

// The mpirun prefix of a command: np ranks on this machine, as root, bounded in time.
inline std::string mpirun(int np) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe "
         "--mca mpi_yield_when_idle 1 -np " + std::to_string(np) + " ";
}

// bytes per update from "Sent 1.11KB/up" on each of rank 0's lines
inline std::vector<double> sentBytesPerUpdateByLine(const std::string& log) {
  std::regex sent("\\] Ep\\. .* : Sent ([0-9.]+)(B|KB|MB|GB)/up");
  std::istringstream lines(log);
  std::smatch m;
  std::vector<double> out;
  for(std::string l; std::getline(lines, l);)
    if(l.find("[rank ") == std::string::npos && std::regex_search(l, m, sent)) {
      double v = std::stod(m[1]);
      std::string unit = m[2];
      v *= unit == "KB" ? 1024.0 : unit == "MB" ? 1048576.0 : unit == "GB" ? 1073741824.0 : 1.0;
      out.push_back(v);
    }
  return out;
}

// the same, averaged over the lines
inline double sentBytesPerUpdate(const std::string& log) {
  std::vector<double> all = sentBytesPerUpdateByLine(log);
  double sum = 0;
  for(double v : all)
    sum += v;
  return all.empty() ? 0 : sum / double(all.size());
}

// The largest absolute difference between the parameters of two model files (numpy reads
// them); -1 when they cannot be compared.
inline double largestParameterDifference(const std::string& a, const std::string& b) {
  std::string cmd = "/usr/bin/python3 -c \"import numpy as np, sys\n"
                    "a = np.load(sys.argv[1]); b = np.load(sys.argv[2])\n"
                    "ks = [k for k in a.files if not k.startswith('special:')]\n"
                    "assert ks and sorted(ks) == sorted(k for k in b.files if not k.startswith('special:'))\n"
                    "print(max(float(np.abs(a[k] - b[k]).max()) for k in ks))\" " + a + " " + b + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[256] = {0};
  std::string out = pipe && fgets(buffer, sizeof buffer, pipe) ? buffer : "";
  int status = pipe ? pclose(pipe) : -1;
  return status == 0 && !out.empty() ? std::stod(out) : -1.0;
}

// The options of the README's line NAME="..." as a user copies it ("" where there is none).
inline std::string readmeOptions(const std::string& name) {
  std::ifstream readme(MARIAN_SOURCE_DIR "/README.md");
  std::string line;
  const std::string key = name + "=\"";
  while(std::getline(readme, line))
    if(line.rfind(key, 0) == 0)
      return line.substr(key.size(), line.rfind('"') - key.size());
  return "";
}

inline std::vector<double> validCE(const std::string& log) {
  std::vector<double> out;
  std::regex line("\\[valid\\] Ep\\. \\d+ : Up\\. \\d+ : cross-entropy : ([0-9.]+)");
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

}  // namespace e2e
