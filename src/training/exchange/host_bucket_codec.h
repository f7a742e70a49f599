#pragma once
// defines: marian::HostBucketCodec — the part of the dense-valued schemes (dense, PowerSGD, 1-bit)
// that is the same for all: the whole bucket goes through the host, its values copied out of
// the shards, reduced there, and copied back.
#include "training/exchange/bucket_codec.h"

namespace marian {

class HostBucketCodec : public BucketCodec {
public:
  explicit HostBucketCodec(const BucketLayout& layout) : layout_(layout), host_(layout.buckets()) {}
  void reduce(size_t b, const std::vector<Tensor>& shards, Allreduce& sum, uint64_t step) final {
    layout_.toHost(b, shards, host_[b]);
    reduceOnHost(b, host_[b], sum, step);
    layout_.fromHost(b, host_[b], shards);
  }

protected:
  // Bucket b's values on the host become the sum over ranks.
  virtual void reduceOnHost(size_t b, std::vector<float>& values, Allreduce& sum, uint64_t step) = 0;
  const BucketLayout& layout_;

private:
  std::vector<std::vector<float>> host_;  // per bucket, kept between updates
};

}  // namespace marian
