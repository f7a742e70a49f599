#include "translator/chrf.h"

#include <cctype>
#include <map>

#include "common/error.h"

namespace marian {

namespace {

constexpr size_t kOrder = 6;
constexpr double kBeta = 2;

// The UTF-8 characters of a line, whitespace removed (one string per character).
std::vector<std::string> characters(const std::string& line) {
  std::vector<std::string> chars;
  for(size_t i = 0; i < line.size();) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    if(!(len == 1 && std::isspace(c)))
      chars.push_back(line.substr(i, len));
    i += len;
  }
  return chars;
}

std::map<std::string, int> ngrams(const std::vector<std::string>& chars, size_t n) {
  std::map<std::string, int> counts;
  for(size_t i = 0; i + n <= chars.size(); ++i) {
    std::string gram;
    for(size_t k = i; k < i + n; ++k)
      gram += chars[k];
    ++counts[gram];
  }
  return counts;
}

}  // namespace

double corpusChrF(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  ABORT_IF(hypotheses.size() != references.size(), "chrF: {} hypotheses but {} references", hypotheses.size(),
           references.size());
  double matches[kOrder] = {}, hypTotal[kOrder] = {}, refTotal[kOrder] = {};
  for(size_t s = 0; s < hypotheses.size(); ++s) {
    std::vector<std::string> hyp = characters(hypotheses[s]), ref = characters(references[s]);
    for(size_t n = 1; n <= kOrder; ++n) {
      auto h = ngrams(hyp, n), r = ngrams(ref, n);
      for(const auto& [gram, count] : h) {
        auto it = r.find(gram);
        if(it != r.end())
          matches[n - 1] += std::min(count, it->second);
        hypTotal[n - 1] += count;
      }
      for(const auto& [gram, count] : r)
        refTotal[n - 1] += count;
    }
  }
  double precision = 0, recall = 0;
  size_t effectiveOrder = 0;
  for(size_t n = 0; n < kOrder; ++n)
    if(hypTotal[n] > 0 && refTotal[n] > 0) {
      precision += matches[n] / hypTotal[n];
      recall += matches[n] / refTotal[n];
      ++effectiveOrder;
    }
  if(effectiveOrder == 0)
    return 0;
  precision /= double(effectiveOrder);
  recall /= double(effectiveOrder);
  if(precision + recall == 0)
    return 0;
  double b2 = kBeta * kBeta;
  return 100 * (1 + b2) * precision * recall / (b2 * precision + recall);
}

}  // namespace marian
