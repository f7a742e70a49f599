#pragma once
// defines: marian::AlignmentPoint, forEachAlignmentPoint, alignmentProblem — Marian's word
// alignments as text: "0-0 1-2 3-1", source-target token positions (0-based, in the vocabulary's
// tokens: SentencePiece's pieces where it encodes), separated by spaces. --guided-alignment reads
// them for training.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

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

}  // namespace marian
