#include "translator/bleu.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

#include "common/error.h"

namespace marian {

namespace {

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
  for(size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// The bytes of the character at s[i] when it is whitespace to Python's str.split(), which sacreBLEU
// splits tokens with, and not to the C locale: U+001C-U+001F, U+0085, the no-break spaces U+00A0
// and U+202F, U+1680, U+2000-U+200A, U+2028, U+2029, U+205F, U+3000; else 0.
size_t unicodeSpaceAt(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned c0 = byte(0), c1 = byte(1), c2 = byte(2);
  if(c0 >= 0x1C && c0 <= 0x1F)
    return 1;
  if(c0 == 0xC2 && (c1 == 0x85 || c1 == 0xA0))
    return 2;
  bool space3 = (c0 == 0xE1 && c1 == 0x9A && c2 == 0x80) ||
                (c0 == 0xE2 && c1 == 0x80 && ((c2 >= 0x80 && c2 <= 0x8A) || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF)) ||
                (c0 == 0xE2 && c1 == 0x81 && c2 == 0x9F) || (c0 == 0xE3 && c1 == 0x80 && c2 == 0x80);
  return space3 ? 3 : 0;
}

}  // namespace

std::vector<std::string> tokenize13a(const std::string& input) {
  std::string line = input;
  replaceAll(line, "<skipped>", "");
  replaceAll(line, "-\n", "");
  replaceAll(line, "\n", " ");
  if(line.find('&') != std::string::npos) {
    replaceAll(line, "&quot;", "\"");
    replaceAll(line, "&amp;", "&");
    replaceAll(line, "&lt;", "<");
    replaceAll(line, "&gt;", ">");
  }
  line = " " + line + " ";
  // mteval-v13a's rules in sacreBLEU's order; the character ranges are {-~ [-` space-& (-+ :-@ /
  static const std::regex punctuation("([\\x7B-\\x7E\\x5B-\\x60\\x20-\\x26\\x28-\\x2B\\x3A-\\x40/])");
  static const std::regex periodCommaAfter("([^0-9])([\\.,])");
  static const std::regex periodCommaBefore("([\\.,])([^0-9])");
  static const std::regex dashAfterDigit("([0-9])(-)");
  line = std::regex_replace(line, punctuation, " $1 ");
  line = std::regex_replace(line, periodCommaAfter, "$1 $2 ");
  line = std::regex_replace(line, periodCommaBefore, " $1 $2");
  line = std::regex_replace(line, dashAfterDigit, "$1 $2 ");
  std::string spaced;  // each of those characters a space
  for(size_t i = 0; i < line.size();) {
    size_t n = unicodeSpaceAt(line, i);
    spaced += n ? std::string(" ") : line.substr(i, 1);
    i += n ? n : 1;
  }
  line = std::move(spaced);
  std::vector<std::string> tokens;
  std::istringstream words(line);
  for(std::string w; words >> w;)
    tokens.push_back(w);
  return tokens;
}

BleuScore corpusBleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  ABORT_IF(hypotheses.size() != references.size(), "BLEU: {} hypotheses but {} references", hypotheses.size(),
           references.size());
  double matches[4] = {}, totals[4] = {};
  BleuScore b;
  for(size_t s = 0; s < hypotheses.size(); ++s) {
    std::vector<std::string> hyp = tokenize13a(hypotheses[s]), ref = tokenize13a(references[s]);
    b.hypLength += hyp.size();
    b.refLength += ref.size();
    for(size_t n = 1; n <= 4; ++n) {
      std::map<std::vector<std::string>, int> refCounts;
      for(size_t i = 0; i + n <= ref.size(); ++i)
        ++refCounts[std::vector<std::string>(ref.begin() + long(i), ref.begin() + long(i + n))];
      std::map<std::vector<std::string>, int> hypCounts;
      for(size_t i = 0; i + n <= hyp.size(); ++i)
        ++hypCounts[std::vector<std::string>(hyp.begin() + long(i), hyp.begin() + long(i + n))];
      for(const auto& [gram, count] : hypCounts) {
        auto it = refCounts.find(gram);
        matches[n - 1] += it == refCounts.end() ? 0 : std::min(count, it->second);
        totals[n - 1] += count;
      }
    }
  }
  // sacreBLEU's compute_bleu with smooth_method "exp"; no match at all scores 0 (its #141)
  b.ratio = b.refLength ? double(b.hypLength) / double(b.refLength) : 0;
  if(b.hypLength == 0)
    b.brevityPenalty = 0;
  else
    b.brevityPenalty = b.hypLength < b.refLength ? std::exp(1.0 - double(b.refLength) / double(b.hypLength)) : 1.0;
  if(matches[0] + matches[1] + matches[2] + matches[3] == 0)
    return b;
  double smooth = 1, logSum = 0;
  for(int n = 0; n < 4; ++n) {
    if(totals[n] == 0) {
      b.precisions[n] = 0;
    } else if(matches[n] == 0) {
      smooth *= 2;
      b.precisions[n] = 100.0 / (smooth * totals[n]);
    } else {
      b.precisions[n] = 100.0 * matches[n] / totals[n];
    }
    logSum += b.precisions[n] > 0 ? std::log(b.precisions[n]) : -9999999999.0;
  }
  b.score = b.brevityPenalty * std::exp(logSum / 4);
  return b;
}

std::string BleuScore::str() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %zu ref_len = %zu)", score,
                precisions[0], precisions[1], precisions[2], precisions[3], brevityPenalty, ratio, hypLength,
                refLength);
  return buf;
}

}  // namespace marian
