// The dense scheme: every value of the bucket is summed exactly by the bucket's algorithm.
#include "training/exchange/codecs.h"
#include "training/exchange/host_bucket_codec.h"

namespace marian {

namespace {

class DenseCodec : public HostBucketCodec {
public:
  using HostBucketCodec::HostBucketCodec;
  bool compresses() const override { return false; }

protected:
  void reduceOnHost(size_t, std::vector<float>& values, Allreduce& sum, uint64_t) override { sum.sumDense(values); }
};

}  // namespace

std::unique_ptr<BucketCodec> createDenseCodec(const CodecSetting& setting) {
  return std::make_unique<DenseCodec>(setting.layout);
}

}  // namespace marian
