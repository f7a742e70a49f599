#pragma once
// defines: marian::BucketLayout — where a rank's gradient buckets lie: the node's gradient is held
// as consecutive shards on the node's devices (n values in all), cut into buckets (sets of ranges
// of the flat layout, training/exchange/gradient_buckets.h); a piece is one bucket's part of
// one shard. Every exchange codec reads the same layout, and places a bucket's values in the
// global layout of a checkpoint, or takes them from it.
#include <vector>

#include "tensors/tensor.h"
#include "training/exchange/gradient_buckets.h"

namespace marian {

class BucketLayout {
public:
  // A bucket's part of a shard (one of each range of the bucket): where it is in the flat
  // layout, in its shard, and in the bucket's values.
  struct Piece {
    size_t shard, bucket;
    Range global;
    size_t inShard, inBucket;
  };

  // shards: the node's gradient shards (their sizes); buckets empty: one bucket of everything.
  BucketLayout(const std::vector<Tensor>& shards, std::vector<GradientBucket> buckets);

  size_t size() const { return n_; }  // values in all
  size_t buckets() const { return buckets_.size(); }
  const GradientBucket& bucket(size_t b) const { return buckets_[b]; }
  size_t bucketSize(size_t b) const { return bucketSizes_[b]; }
  // Pieces by bucket, then shard: piece numbers are those of one shard each when there is one
  // bucket (what selectors' seeds are numbered by).
  const std::vector<Piece>& pieces() const { return pieces_; }
  const std::vector<size_t>& piecesOf(size_t b) const { return bucketPieces_[b]; }
  Tensor pieceOf(const Piece& p, const std::vector<Tensor>& shards) const {
    return shards[p.shard].slice(p.inShard, p.global.size);
  }
  // An error unless `shards` hold the n values this layout was made for.
  void checkShards(const std::vector<Tensor>& shards) const;

  // Bucket b's values from the shards into `host` (resized), and back.
  void toHost(size_t b, const std::vector<Tensor>& shards, std::vector<float>& host) const;
  void fromHost(size_t b, const std::vector<float>& host, const std::vector<Tensor>& shards) const;
  // A bucket's values (in its own coordinates) placed into, or taken from, the global layout.
  void placeBucket(size_t b, const std::vector<float>& inBucket, std::vector<float>& global) const;
  std::vector<float> takeBucket(size_t b, const std::vector<float>& global) const;
  // Where each parameter of bucket b begins, in the bucket's coordinates (sorted).
  std::vector<size_t> parameterStarts(size_t b, const Parameters& layout) const;

private:
  std::vector<GradientBucket> buckets_;
  std::vector<size_t> bucketSizes_;
  std::vector<Piece> pieces_;
  std::vector<std::vector<size_t>> bucketPieces_;
  size_t n_ = 0;
};

}  // namespace marian
