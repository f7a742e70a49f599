// marian-vocab: builds a Marian YAML vocabulary from text on stdin, most frequent words first.
// Usage: marian-vocab [--max-size N] < corpus.txt > vocab.yml
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "data/vocab.h"

int main(int argc, char** argv) {
  size_t maxSize = 0;
  for(int i = 1; i < argc; ++i) {
    if((!std::strcmp(argv[i], "--max-size") || !std::strcmp(argv[i], "-m")) && i + 1 < argc) {
      maxSize = size_t(std::atoll(argv[++i]));
    } else if(!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::puts("Usage: marian-vocab [--max-size N] < corpus.txt > vocab.yml");
      return 0;
    } else {
      std::fprintf(stderr, "Error: unknown option '%s' (see --help)\n", argv[i]);
      return 1;
    }
  }
  std::vector<std::string> lines;
  std::string line;
  while(std::getline(std::cin, line))
    lines.push_back(line);
  std::cout << marian::buildYamlVocab(lines, maxSize);
  return 0;
}
