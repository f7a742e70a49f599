#include "training/gradient_buckets.h"

#include <algorithm>

#include "common/error.h"

namespace marian {

size_t bucketSize(const GradientBucket& bucket) {
  size_t n = 0;
  for(const Range& r : bucket)
    n += r.size;
  return n;
}

std::vector<GradientBucket> gradientBuckets(const Parameters& layout, size_t floats, const std::vector<size_t>& order) {
  const auto& entries = layout.entries();
  size_t n = layout.totalSize();
  if(floats == 0 || entries.empty())
    return {{{0, n}}};
  std::vector<char> seen(entries.size(), 0);
  ABORT_IF(order.size() != entries.size(), "Gradient buckets: an order of {} parameters for {}", order.size(),
           entries.size());
  std::vector<std::vector<Range>> params;  // per bucket, its parameters' ranges
  size_t filled = 0;
  for(size_t p : order) {
    ABORT_IF(p >= entries.size() || seen[p], "Gradient buckets: parameter {} is missing from the order or twice in it",
             p);
    seen[p] = 1;
    size_t size = entries[p].shape.elements();
    if(params.empty() || (filled > 0 && filled + size > floats)) {
      params.emplace_back();
      filled = 0;
    }
    params.back().push_back({entries[p].offset, size});
    filled += size;
  }
  std::vector<GradientBucket> buckets;
  for(std::vector<Range>& ranges : params) {
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.offset < b.offset; });
    GradientBucket bucket;
    for(const Range& r : ranges)
      if(!bucket.empty() && bucket.back().end() == r.offset)
        bucket.back().size += r.size;
      else
        bucket.push_back(r);
    buckets.push_back(bucket);
  }
  return buckets;
}

}  // namespace marian
