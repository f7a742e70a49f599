#include "training/exchange/gradient_allreducer.h"

#include "comm/allreduce/algorithms.h"

namespace marian {

GradientAllreducer::GradientAllreducer(const Options& o, Transport& transport, const std::vector<Tensor>& shards,
                                       uint64_t seed, const std::vector<GradientBucket>& buckets,
                                       const Parameters* parameters, const AdamMoments& moments)
    : layout_(shards, buckets), compression_(Compression::fromOptions(o, o.get<float>("compression-density"))) {
  validateAllreduceOptions(o);
  AllreduceSettings settings;
  settings.repartitionEvery = o.get<int>("oktopk-repartition-every");
  settings.thresholdEvery = o.get<int>("topk-reuse-every");
  for(size_t b = 0; b < layout_.buckets(); ++b)
    algorithms_.push_back(createAllreduce(o.get<std::string>("sparse-allreduce"), transport, settings));
  codec_ = createBucketCodec({o, transport, layout_, shards, seed, parameters, moments, compression_});
}

void GradientAllreducer::reduce(const std::vector<Tensor>& shards) {
  for(size_t b = 0; b < layout_.buckets(); ++b)
    reduceBucket(b, shards);
}

void GradientAllreducer::reduceBucket(size_t b, const std::vector<Tensor>& shards) {
  layout_.checkShards(shards);
  uint64_t hidden = algorithms_[b]->callsNotCounted();
  codec_->reduce(b, shards, *algorithms_[b], step_);
  if(algorithms_[b]->callsNotCounted() != hidden && lastStepNotCounted_ != step_) {
    lastStepNotCounted_ = step_;
    ++updatesNotCounted_;
  }
}

uint64_t GradientAllreducer::takeUpdatesNotCounted() {
  uint64_t n = updatesNotCounted_;
  updatesNotCounted_ = 0;
  return n;
}

}  // namespace marian
