#pragma once
// defines: marian::SchedulingParameter — "1000u" (updates), "5e" (epochs), "20000t" (target
// labels), or a bare number (updates), as in Marian's --disp-freq, --valid-freq, --lr-warmup;
// the count may carry Marian's multipliers k/K (1e3), M, G, T and commas ("100Ku", "1,000,000t");
// --after's list of criteria ("10e,300Ku").
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"

namespace marian {

enum class SchedulingUnit { updates, epochs, labels };

struct SchedulingParameter {
  uint64_t n = 0;
  SchedulingUnit unit = SchedulingUnit::updates;

  static SchedulingParameter parse(const std::string& text, const std::string& option) {
    auto fail = [&]() {
      ABORT("Option '{}': '{}' is not a whole count with an optional multiplier k, M, G, T and unit u (updates), "
            "e (epochs) or t (labels), such as 16000, 100Ku, 1e or 10Mt",
            option, text);
    };
    SchedulingParameter p;
    std::string digits;
    for(char c : text)
      if(c != ',')
        digits += c;
    if(!digits.empty() && std::string("uet").find(digits.back()) != std::string::npos) {
      char u = digits.back();
      p.unit = u == 'u' ? SchedulingUnit::updates : u == 'e' ? SchedulingUnit::epochs : SchedulingUnit::labels;
      digits.pop_back();
    }
    double factor = 1;
    if(!digits.empty() && std::string("kKMGT").find(digits.back()) != std::string::npos) {
      char m = digits.back();
      factor = m == 'k' || m == 'K' ? 1e3 : m == 'M' ? 1e6 : m == 'G' ? 1e9 : 1e12;
      digits.pop_back();
    }
    if(digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.'))
      fail();
    char* end = nullptr;
    double v = std::strtod(digits.c_str(), &end) * factor;
    if(*end != '\0' || !(v >= 0) || v > 1e18 || v != std::floor(v))
      fail();
    p.n = uint64_t(v);
    return p;
  }
  // Marian's --after "10e,300Ku,20Gt": several criteria, training stopping at the first it meets.
  // Where a piece between commas carries no unit or multiplier ("1,000,000t"), the commas are a
  // count's, as in every scheduling option: one criterion.
  static std::vector<SchedulingParameter> parseList(const std::string& text, const std::string& option) {
    std::vector<std::string> pieces(1);
    for(char c : text) {
      if(c == ',')
        pieces.emplace_back();
      else
        pieces.back().push_back(c);
    }
    bool list = pieces.size() > 1;
    for(const std::string& piece : pieces)
      list = list && !piece.empty() && std::isalpha(static_cast<unsigned char>(piece.back()));
    if(!list)
      return {parse(text, option)};
    std::vector<SchedulingParameter> criteria;
    for(const std::string& piece : pieces)
      criteria.push_back(parse(piece, option));
    return criteria;
  }
  explicit operator bool() const { return n != 0; }
  // "1000u", "5e", "20000t": what parse reads back
  std::string str() const {
    return std::to_string(n) + (unit == SchedulingUnit::epochs ? "e" : unit == SchedulingUnit::labels ? "t" : "u");
  }
};

}  // namespace marian
