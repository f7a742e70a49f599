#include "data/word_alignment.h"

namespace marian {

namespace {
// digits at p (at most 9) into *value; the end of them, or nullptr
const char* readPosition(const char* p, const char* end, uint32_t& value) {
  const char* start = p;
  value = 0;
  while(p < end && *p >= '0' && *p <= '9' && p - start < 10)
    value = value * 10 + uint32_t(*p++ - '0');
  return p == start || p - start > 9 ? nullptr : p;
}
}  // namespace

bool forEachAlignmentPoint(const char* line, size_t n, const std::function<void(AlignmentPoint)>& onPoint) {
  const char* end = line + n;
  for(const char* p = line;;) {
    while(p < end && (*p == ' ' || *p == '\t'))
      ++p;
    if(p == end)
      return true;
    AlignmentPoint a{};
    p = readPosition(p, end, a.src);
    if(!p || p == end || *p != '-')
      return false;
    p = readPosition(p + 1, end, a.trg);
    if(!p || (p < end && *p != ' ' && *p != '\t'))
      return false;
    onPoint(a);
  }
}

std::string alignmentProblem(const char* line, size_t n) {
  if(forEachAlignmentPoint(line, n, [](AlignmentPoint) {}))
    return "";
  return "is not a list of word alignments (source-target token positions, 0-based, such as '0-0 1-2 2-1', "
         "separated by spaces): '" + std::string(line, n) + "'";
}

}  // namespace marian
