#pragma once
// defines: corpus chrF as Marian's validator computes it (its re-implementation of sacreBLEU's
// chrF, Popović 2015): character n-grams of orders 1-6 over the text without whitespace, counts
// summed over the corpus, precision and recall averaged over the orders that occur in both
// hypotheses and references, then F-beta with beta 2, times 100.
#include <string>
#include <vector>

namespace marian {

double corpusChrF(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace marian
