#include "training/exchange/gradient_buckets.h"

#include <algorithm>

#include "common/error.h"
#include "common/fnv.h"

namespace marian {

size_t bucketSize(const GradientBucket& bucket) {
  size_t n = 0;
  for(const Range& r : bucket)
    n += r.size;
  return n;
}

namespace {
// Every bucket's ranges with their bucket, by offset.
std::vector<std::pair<Range, size_t>> rangesByOffset(const std::vector<GradientBucket>& buckets) {
  std::vector<std::pair<Range, size_t>> ranges;
  for(size_t b = 0; b < buckets.size(); ++b)
    for(const Range& r : buckets[b])
      ranges.push_back({r, b});
  std::sort(ranges.begin(), ranges.end(), [](const auto& x, const auto& y) { return x.first.offset < y.first.offset; });
  return ranges;
}
}  // namespace

void checkBucketsCover(const std::vector<GradientBucket>& buckets, size_t n) {
  size_t covered = 0;
  for(const auto& [r, b] : rangesByOffset(buckets)) {
    ABORT_IF(r.offset != covered || r.size == 0, "Gradient bucket {}: its range [{}, {}) {}", b, r.offset, r.end(),
             r.size == 0 ? "is empty" : r.offset < covered ? "overlaps another" : "leaves a gap before it");
    covered = r.end();
  }
  ABORT_IF(covered != n, "Gradient buckets cover {} of {} values", covered, n);
}

std::vector<size_t> bucketOfEachParameter(const Parameters& layout, const std::vector<GradientBucket>& buckets) {
  std::vector<std::pair<Range, size_t>> ranges = rangesByOffset(buckets);
  std::vector<size_t> bucketOf;
  for(const Parameters::Entry& e : layout.entries()) {
    auto inside = std::upper_bound(ranges.begin(), ranges.end(), e.offset,
                                   [](size_t offset, const auto& r) { return offset < r.first.end(); });
    ABORT_IF(inside == ranges.end() || e.offset < inside->first.offset ||
                 e.offset + e.shape.elements() > inside->first.end(),
             "Parameter '{}' is not inside one gradient bucket", e.name);
    bucketOf.push_back(inside->second);
  }
  return bucketOf;
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

void checkSameBucketsAsRankZero(Transport& transport, const Parameters& layout,
                                const std::vector<GradientBucket>& buckets, const std::vector<size_t>& tablesApart) {
  Fnv64 fingerprint;  // of the tables' offsets and the ranges
  for(size_t table : tablesApart)
    fingerprint.add(uint64_t(layout.entries()[table].offset));
  for(const GradientBucket& bucket : buckets) {
    for(const Range& r : bucket)
      for(uint64_t v : {uint64_t(r.offset), uint64_t(r.size)})
        fingerprint.add(v);
    fingerprint.add(0xB0C4E7ull);  // where a bucket ends
  }
  uint64_t hash = fingerprint.value;
  uint64_t root = transport.broadcastFromRoot(hash, transport.peerTimeout(), "the gradient buckets");
  ABORT_IF(root != hash,
           "Rank {} cut {} gradient buckets{} that differ from rank 0's: the ranks built different graphs (give every "
           "rank the same model options)",
           transport.rank(), buckets.size(), tablesApart.empty() ? "" : " (lookups apart)");
}

}  // namespace marian
