// marian-vocab: builds a Marian YAML vocabulary from text on stdin, most frequent words first.
// Usage: marian-vocab [--max-size N] < corpus.txt > vocab.yml
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "common/tool_arguments.h"
#include "data/vocab.h"

int main(int argc, char** argv) {
  const char* usage = "marian-vocab [--max-size N] < corpus.txt > vocab.yml";
  try {
    size_t maxSize = 0;
    for(auto& [name, value] : marian::toolArguments(argc, argv, {"--max-size", "-m"}, usage)) {
      if(name == "--help") {
        std::printf("Usage: %s\n", usage);
        return 0;
      }
      maxSize = size_t(marian::toolNumber(name, value, 0, 1e9, true));  // 0: every word
    }
    std::vector<std::string> lines;
    std::string line;
    while(std::getline(std::cin, line))
      lines.push_back(line);
    std::cout << marian::buildYamlVocab(lines, maxSize);
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
