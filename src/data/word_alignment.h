#pragma once
// defines: marian::AlignmentPoint, forEachAlignmentPoint, alignmentProblem, SoftAlignment,
// AlignmentOutput — Marian's word alignments as text: "0-0 1-2 3-1", source-target token
// positions (0-based, in the vocabulary's tokens: SentencePiece's pieces where it encodes),
// separated by spaces. --guided-alignment reads them for training; --alignment writes them (or
// the soft alignment itself) beside translations and scores.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace marian {

struct AlignmentPoint {
  uint32_t src, trg;  // token positions
};

// The points of a line in order; false at the first item that is not "S-T" (digits, a dash,
// digits), or a position of more than 9 digits.
bool forEachAlignmentPoint(const char* line, size_t n, const std::function<void(AlignmentPoint)>& onPoint);
// What is wrong with a line of alignments (words that follow "line N"), or "". An empty line is
// a pair without alignments (only </s>-</s>, which training adds to every pair, as Marian).
std::string alignmentProblem(const char* line, size_t n);

// P(source token | target token): a row a target token, a value a source token (</s> last in both).
using SoftAlignment = std::vector<std::vector<float>>;
// The same in reading order for a right-left model (whose tokens are reversed but for </s>);
// trgEndsWithEos: whether the last row is </s>'s (a translation cut at its length limit has none).
SoftAlignment readingOrder(const SoftAlignment& modelOrder, bool trgEndsWithEos = true);

// Marian's --alignment: hard, each target token's most likely source token (the first of equals);
// soft, every probability ("0.1,0.9 0.8,0.2": a target token's by commas, the tokens by spaces);
// a threshold in (0, 1), the points above it (1 is hard). Points sorted by source, then target.
class AlignmentOutput {
public:
  // The option's value; an error names any other.
  explicit AlignmentOutput(const std::string& option);
  std::string text(const SoftAlignment& alignment) const;

private:
  bool soft_ = false;
  float threshold_ = 1.f;
};

}  // namespace marian
