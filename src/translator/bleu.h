#pragma once
// defines: corpus BLEU as sacreBLEU computes it by default (Papineni et al. 2002; Post 2018):
// detokenized text, the 13a tokenization of mteval-v13a, cased, one reference, n-grams up to 4,
// brevity penalty, "exp" smoothing of zero counts.
#include <string>
#include <vector>

namespace marian {

// The tokens of a detokenized line under 13a (punctuation split off; periods and commas kept
// inside numbers; a dash after a digit split off).
std::vector<std::string> tokenize13a(const std::string& line);

struct BleuScore {
  double score = 0;             // 0-100
  double precisions[4] = {};    // 0-100
  double brevityPenalty = 0, ratio = 0;
  size_t hypLength = 0, refLength = 0;
  // "BLEU = 34.56 67.8/42.1/28.3/19.5 (BP = 0.981 ratio = 0.981 hyp_len = 12345 ref_len = 12580)"
  std::string str() const;
};

BleuScore corpusBleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace marian
