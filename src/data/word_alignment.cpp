#include "data/word_alignment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "common/error.h"

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

SoftAlignment readingOrder(const SoftAlignment& modelOrder, bool trgEndsWithEos) {
  SoftAlignment out = modelOrder;
  if(!out.empty())
    std::reverse(out.begin(), out.end() - (trgEndsWithEos ? 1 : 0));
  for(std::vector<float>& row : out)
    if(!row.empty())
      std::reverse(row.begin(), row.end() - 1);
  return out;
}

AlignmentOutput::AlignmentOutput(const std::string& option) {
  if(option == "soft") {
    soft_ = true;
    return;
  }
  if(option == "hard")
    return;
  const char* end = option.data() + option.size();
  auto [ptr, ec] = std::from_chars(option.data(), end, threshold_);
  ABORT_IF(option.empty() || ec != std::errc() || ptr != end || !(threshold_ > 0.f && threshold_ <= 1.f),
           "--alignment '{}': hard, soft, or a threshold in (0, 1] (the points above it; 1 is hard)", option);
}

std::string AlignmentOutput::text(const SoftAlignment& alignment) const {
  std::ostringstream out;
  if(soft_) {  // as Marian's, each value as a stream writes a float (6 significant digits)
    for(size_t t = 0; t < alignment.size(); ++t) {
      out << (t ? " " : "");
      for(size_t s = 0; s < alignment[t].size(); ++s)
        out << (s ? "," : "") << alignment[t][s];
    }
    return out.str();
  }
  std::vector<AlignmentPoint> points;
  for(size_t t = 0; t < alignment.size(); ++t) {
    const std::vector<float>& row = alignment[t];
    if(threshold_ == 1.f) {
      if(!row.empty())
        points.push_back({uint32_t(std::max_element(row.begin(), row.end()) - row.begin()), uint32_t(t)});
      continue;
    }
    for(size_t s = 0; s < row.size(); ++s)
      if(row[s] > threshold_)
        points.push_back({uint32_t(s), uint32_t(t)});
  }
  std::stable_sort(points.begin(), points.end(), [](const AlignmentPoint& a, const AlignmentPoint& b) {
    return a.src < b.src || (a.src == b.src && a.trg < b.trg);
  });
  for(size_t i = 0; i < points.size(); ++i)
    out << (i ? " " : "") << points[i].src << "-" << points[i].trg;
  return out.str();
}

}  // namespace marian
