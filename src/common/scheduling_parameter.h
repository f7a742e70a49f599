#pragma once
// defines: marian::SchedulingParameter — "1000u" (updates), "5e" (epochs), "20000t" (target
// labels), or a bare number (updates), as in Marian's --disp-freq, --valid-freq, --lr-warmup.
#include <cstdint>
#include <string>

#include "common/error.h"

namespace marian {

enum class SchedulingUnit { updates, epochs, labels };

struct SchedulingParameter {
  uint64_t n = 0;
  SchedulingUnit unit = SchedulingUnit::updates;

  static SchedulingParameter parse(const std::string& text, const std::string& option) {
    SchedulingParameter p;
    std::string digits = text;
    if(!digits.empty() && std::string("uet").find(digits.back()) != std::string::npos) {
      char u = digits.back();
      p.unit = u == 'u' ? SchedulingUnit::updates : u == 'e' ? SchedulingUnit::epochs : SchedulingUnit::labels;
      digits.pop_back();
    }
    char* end = nullptr;
    double v = std::strtod(digits.c_str(), &end);
    ABORT_IF(digits.empty() || *end != '\0' || v < 0,
             "Option '{}': '{}' is not a count with an optional unit u (updates), e (epochs) or t (labels)",
             option, text);
    p.n = uint64_t(v);
    return p;
  }
  explicit operator bool() const { return n != 0; }
};

}  // namespace marian
