#pragma once
// defines: marian::BucketCodec — one communication scheme of synchronous SGD across ranks, applied
// to one bucket of the gradient at a time: it encodes what the rank sends (whole, its top-k with a
// residual, low-rank factors, 1 bit a value), exchanges it through the bucket's allreduce
// algorithm (or its own) and decodes the sum into the bucket's shards, identical on every rank.
// It owns its state (residuals, selectors, factors, errors) and saves and restores it in the
// global layout of a checkpoint (collectively: rank 0 writes). The bytes are counted by the
// transport. GradientAllreducer (gradient_allreducer.h) is the loop over buckets around one codec;
// createBucketCodec chooses the scheme once from the options.
//
// A new scheme is one more class behind this interface in its own file of this folder, a case in
// codec_factory.cpp, and its options in the spec table (common/option_table.cpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "comm/compression.h"
#include "optimizers/adam_moments.h"
#include "optimizers/model_state.h"
#include "training/exchange/bucket_layout.h"

namespace marian {

class Options;
class Parameters;

class BucketCodec {
public:
  virtual ~BucketCodec() = default;
  // Bucket b's values in `shards` (this rank's gradient) become the sum over ranks of what each
  // rank sent; `sum` is the bucket's allreduce algorithm; step: the update, counted from 0.
  virtual void reduce(size_t b, const std::vector<Tensor>& shards, Allreduce& sum, uint64_t step) = 0;
  // Collective: what the scheme holds back goes to rank 0's `state`.
  virtual void saveTo(ModelState& state) {}
  // Takes it back, from a checkpoint of this or another rank, device or bucket count.
  virtual void restoreFrom(const ModelState& state) {}
  // Whether the sum is approximate, with residuals or errors.
  virtual bool compresses() const { return true; }
  // Whether this step's result is no gradient but what gives the optimizer an averaged momentum
  // (1-bit Adam), each rank's own gradient clipped before: not to be clipped again.
  virtual bool clippedBeforeTheSum(uint64_t step) const { return false; }
};

// What the codecs are made from.
struct CodecSetting {
  const Options& options;
  Transport& transport;
  const BucketLayout& layout;
  const std::vector<Tensor>& shards;  // their devices (top-k selects where a piece lives)
  uint64_t seed;                      // the rank's seed for sampled selections and PowerSGD's Q
  const Parameters* parameters;       // shapes: PowerSGD's matrices, 1-bit's per-parameter scales
  AdamMoments moments;                // 1-bit Adam's view of the optimizer's moments
  Compression compression;            // top-k's settings (--compression-density and company)
};

// The scheme the options name: dense, top-k (--compression-density < 1), PowerSGD
// (--powersgd-rank), 1-bit or 0/1 Adam (--onebit-adam, --zero-one-adam).
std::unique_ptr<BucketCodec> createBucketCodec(const CodecSetting& setting);

// Whether the momentum goes in 1 bit (--onebit-adam or --zero-one-adam).
bool sendsOneBit(const Options& options);
// Checks the options of synchronous SGD across ranks (also on one rank, so typos never pass).
void validateAllreduceOptions(const Options& options);

}  // namespace marian
