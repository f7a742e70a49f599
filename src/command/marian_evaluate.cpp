// marian-evaluate: corpus BLEU of detokenized hypotheses on stdin against a reference file, as
// sacreBLEU prints it by default (13a, cased):
//   marian-evaluate --metric bleu --reference ref.en < hyp.en
#include <cstdio>
#include <iostream>

#include "common/error.h"
#include "data/text_file.h"
#include "translator/bleu.h"

using namespace marian;

int main(int argc, char** argv) {
  try {
    std::string metric = "bleu", reference;
    for(int i = 1; i < argc; ++i) {
      std::string k = argv[i];
      auto value = [&]() -> std::string {
        ABORT_IF(i + 1 >= argc, "Option '{}' needs a value", k);
        return argv[++i];
      };
      if(k == "--metric")
        metric = value();
      else if(k == "--reference" || k == "-r")
        reference = value();
      else
        ABORT("Unknown option '{}'; use --metric bleu --reference REF < HYP", k);
    }
    ABORT_IF(metric != "bleu", "Unknown --metric '{}': bleu is the one there is", metric);
    ABORT_IF(reference.empty(), "Give the reference with --reference FILE");
    std::vector<std::string> refs = readLines(reference, "Reference file");
    std::vector<std::string> hyps;
    for(std::string line; std::getline(std::cin, line);)
      hyps.push_back(line);
    ABORT_IF(hyps.size() != refs.size(), "{} hypothesis lines on stdin but {} reference lines in {}", hyps.size(),
             refs.size(), reference);
    std::printf("%s\n", corpusBleu(hyps, refs).str().c_str());
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
