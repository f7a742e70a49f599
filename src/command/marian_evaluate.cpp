// marian-evaluate: corpus BLEU (or chrF) of detokenized hypotheses on stdin against a reference
// file, as sacreBLEU prints it by default (BLEU 13a, cased; chrF2 as Marian's validator scores it):
//   marian-evaluate --metric bleu|chrf --reference ref.en < hyp.en
#include <cstdio>
#include <iostream>

#include "common/error.h"
#include "common/tool_arguments.h"
#include "data/text_file.h"
#include "translator/bleu.h"
#include "translator/chrf.h"

using namespace marian;

int main(int argc, char** argv) {
  try {
    auto args = toolArguments(argc, argv, {"--metric", "--reference", "-r"},
                              "--metric bleu|chrf --reference REF < HYP");
    if(args.count("--help")) {
      std::printf("Usage: marian-evaluate --metric bleu|chrf --reference REF < HYP\n");
      return 0;
    }
    std::string metric = args.count("--metric") ? args["--metric"] : "bleu";
    std::string reference = args.count("-r") ? args["-r"] : args["--reference"];
    ABORT_IF(metric != "bleu" && metric != "chrf", "Unknown --metric '{}': bleu or chrf", metric);
    ABORT_IF(reference.empty(), "Give the reference with --reference FILE");
    std::vector<std::string> refs = readLines(reference, "Reference file");
    std::vector<std::string> hyps = readStdinLines("Hypothesis");
    ABORT_IF(hyps.size() != refs.size(), "{} hypothesis lines on stdin but {} reference lines in {}", hyps.size(),
             refs.size(), reference);
    if(metric == "bleu")
      std::printf("%s\n", corpusBleu(hyps, refs).str().c_str());
    else
      std::printf("chrF2 = %.2f\n", corpusChrF(hyps, refs));
  } catch(const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
