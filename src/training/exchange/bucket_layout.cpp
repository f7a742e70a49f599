#include "training/exchange/bucket_layout.h"

#include <algorithm>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

BucketLayout::BucketLayout(const std::vector<Tensor>& shards, std::vector<GradientBucket> buckets)
    : buckets_(std::move(buckets)) {
  for(const Tensor& t : shards)
    n_ += t.size();
  if(buckets_.empty())
    buckets_.push_back({{0, n_}});
  checkBucketsCover(buckets_, n_);
  bucketPieces_.resize(buckets_.size());
  for(size_t b = 0; b < buckets_.size(); ++b) {
    bucketSizes_.push_back(marian::bucketSize(buckets_[b]));
    size_t inBucket = 0;
    for(const Range& range : buckets_[b]) {
      size_t shardBegin = 0;
      for(size_t s = 0; s < shards.size(); ++s) {
        size_t begin = std::max(shardBegin, range.offset), end = std::min(shardBegin + shards[s].size(), range.end());
        if(begin < end) {
          bucketPieces_[b].push_back(pieces_.size());
          pieces_.push_back({s, b, {begin, end - begin}, begin - shardBegin, inBucket + (begin - range.offset)});
        }
        shardBegin += shards[s].size();
      }
      inBucket += range.size;
    }
  }
}

void BucketLayout::checkShards(const std::vector<Tensor>& shards) const {
  size_t n = 0;
  for(const Tensor& t : shards)
    n += t.size();
  ABORT_IF(n != n_, "GradientAllreducer for {} values was given shards of {}", n_, n);
}

void BucketLayout::toHost(size_t b, const std::vector<Tensor>& shards, std::vector<float>& host) const {
  host.resize(bucketSizes_[b]);
  for(size_t i : bucketPieces_[b]) {
    const Piece& p = pieces_[i];
    kernels::copy(Tensor(host.data() + p.inBucket, Shape({int(p.global.size)}), Type::float32, cpuDevice()),
                  pieceOf(p, shards));
  }
}

void BucketLayout::fromHost(size_t b, const std::vector<float>& host, const std::vector<Tensor>& shards) const {
  for(size_t i : bucketPieces_[b]) {
    const Piece& p = pieces_[i];
    kernels::copy(pieceOf(p, shards), Tensor(const_cast<float*>(host.data()) + p.inBucket,
                                             Shape({int(p.global.size)}), Type::float32, cpuDevice()));
  }
}

void BucketLayout::placeBucket(size_t b, const std::vector<float>& inBucket, std::vector<float>& global) const {
  size_t at = 0;
  for(const Range& range : buckets_[b]) {
    std::copy(inBucket.begin() + long(at), inBucket.begin() + long(at + range.size), global.begin() + long(range.offset));
    at += range.size;
  }
}

std::vector<float> BucketLayout::takeBucket(size_t b, const std::vector<float>& global) const {
  ABORT_IF(global.size() != n_, "A checkpoint array of {} values for a gradient of {}", global.size(), n_);
  std::vector<float> mine;
  for(const Range& range : buckets_[b])
    mine.insert(mine.end(), global.begin() + long(range.offset), global.begin() + long(range.end()));
  return mine;
}

std::vector<size_t> BucketLayout::parameterStarts(size_t b, const Parameters& layout) const {
  std::vector<size_t> starts;
  size_t inBucket = 0;
  for(const Range& range : buckets_[b]) {
    for(const Parameters::Entry& e : layout.entries())
      if(e.offset >= range.offset && e.offset < range.end())
        starts.push_back(inBucket + (e.offset - range.offset));
    inBucket += range.size;
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

}  // namespace marian
