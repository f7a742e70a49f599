#include "comm/allreduce/segments.h"

#include "common/error.h"

namespace marian {

std::vector<size_t> segmentStarts(const std::vector<size_t>& parameterStarts, size_t n, size_t block) {
  std::vector<size_t> starts;
  for(size_t i = 0; i < parameterStarts.size(); ++i) {
    size_t end = i + 1 < parameterStarts.size() ? parameterStarts[i + 1] : n;
    ABORT_IF(parameterStarts[i] > end || end > n, "Parameter starts must be sorted and within {}", n);
    for(size_t s = parameterStarts[i]; s < end; s += block ? block : end - s)
      starts.push_back(s);
  }
  if(starts.empty() || starts[0] != 0)
    starts.insert(starts.begin(), 0);
  return starts;
}

std::vector<size_t> segmentsIn(Range c, const std::vector<size_t>& segmentStarts) {
  std::vector<size_t> starts = {0};
  for(size_t s : segmentStarts)
    if(s > c.offset && s < c.end())
      starts.push_back(s - c.offset);
  return starts;
}

std::vector<size_t> segmentStartsIn(Range c, const std::vector<size_t>& parameterStarts, size_t block) {
  return segmentStarts(segmentsIn(c, parameterStarts), c.size, block);
}

}  // namespace marian
