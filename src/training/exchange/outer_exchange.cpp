#include "training/exchange/outer_exchange.h"

#include <cmath>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/chunk_topk_mean.h"
#include "comm/allreduce/onebit.h"
#include "comm/allreduce/quantized.h"
#include "comm/allreduce/segments.h"
#include "comm/state_gather.h"
#include "comm/topk_selection.h"
#include "common/error.h"
#include "training/exchange/codec_checkpoint.h"

namespace marian {

namespace {

const char* kServerError = "outer-server-error";

class DenseOuterExchange : public OuterExchange {
public:
  explicit DenseOuterExchange(Transport& transport) : transport_(transport), ring_(createAllreduce("ring", transport)) {
    ring_->setChannel(Channel::outer);
  }
  void average(std::vector<float>& delta) override {
    ring_->sumDense(delta);
    float inverse = 1.f / float(transport_.size());
    for(float& g : delta)
      g *= inverse;
  }

private:
  Transport& transport_;
  std::unique_ptr<Allreduce> ring_;
};

// Quantized (8, 4 or 2 bits) or a sign a value (1 bit): a compressed mean with error feedback on
// each rank and on each chunk's owner.
class CompressedOuterExchange : public OuterExchange {
public:
  CompressedOuterExchange(Transport& transport, std::unique_ptr<CompressedMeanAllreduce> mean)
      : transport_(transport), mean_(std::move(mean)) {
    mean_->setChannel(Channel::outer);
  }
  void average(std::vector<float>& delta) override { mean_->averageCompressed(delta); }

  HeldBack heldBack() const override {
    HeldBack h;
    h.residual = mean_->workerError();
    h.ownerError.assign(mean_->size(), 0.f);
    placeRange(h.ownerError, mean_->chunk(transport_.rank()), mean_->serverError());
    return h;
  }
  void setHeldBack(HeldBack h) override {
    Range mine = mean_->chunk(transport_.rank());
    mean_->setErrors(std::move(h.residual), rangeOf(h.ownerError, mine));
  }

private:
  Transport& transport_;
  std::unique_ptr<CompressedMeanAllreduce> mean_;
};

// 1 bit: a sign a value and the mean |x| of each segment, segments cut at every parameter's start
// and every kOneBitBlock values within (so that a tensor of small values, a layer norm's, never
// goes at a matrix's scale); the mean-abs scale is the least-squares one (onebit.h).
const size_t kOneBitBlock = QuantizedAllreduce::kBlock;

std::unique_ptr<CompressedMeanAllreduce> oneBitMean(Transport& transport, Range fragment,
                                                    const std::vector<size_t>& parameterStarts) {
  auto mean = std::make_unique<OneBitAllreduce>(transport, fragment.size,
                                                segmentStartsIn(fragment, parameterStarts, kOneBitBlock));
  mean->setScale(OneBitScale::meanAbs);
  return mean;
}

class SparseOuterExchange : public OuterExchange {
public:
  SparseOuterExchange(Transport& transport, size_t n, float density, const std::string& algorithm)
      : transport_(transport), n_(n), k_(ChunkTopkMean::keptIn(n, density)),  // --outer-density's one rule, chunked or not
        selector_(n, TopkMethod::exact, 0), sum_(createAllreduce(algorithm, transport)) {
    sum_->setChannel(Channel::outer);
  }

  void average(std::vector<float>& delta) override {
    SparseVector sent = selector_.select(Tensor(delta.data(), Shape({int(n_)}), Type::float32, cpuDevice()), k_);
    AllreduceResult sum = sum_->reduce(sent, n_);
    ABORT_IF(sum.isSelection, "--outer-density needs the whole sum, which '{}' does not give", sum_->name());
    delta = sum.toDense(n_);
    float inverse = 1.f / float(transport_.size());
    for(float& g : delta)
      g *= inverse;
  }

  HeldBack heldBack() const override { return {selector_.state().residual, {}}; }
  void setHeldBack(HeldBack h) override {
    TopkSelector::State s = selector_.state();
    s.residual = std::move(h.residual);
    selector_.setState(s);
  }

private:
  Transport& transport_;
  size_t n_, k_;
  TopkSelector selector_;
  std::unique_ptr<Allreduce> sum_;
};

// SparseLoCo's: each rank's accumulator e = decay x e + its pseudo-gradient; of every chunk of e
// (every parameter's values in blocks of ChunkTopkMean::kChunk) the largest values in 1 or 2 bits
// to every rank, and e keeps what they did not carry (error feedback).
class ChunkTopkOuterExchange : public OuterExchange {
public:
  ChunkTopkOuterExchange(Transport& transport, Range fragment, const std::vector<size_t>& parameterStarts,
                         float density, int bits, float decay)
      : mean_(transport, fragment.size, segmentStartsIn(fragment, parameterStarts, ChunkTopkMean::kChunk), density,
              bits),
        decay_(decay), residual_(fragment.size, 0.f) {
    mean_.setChannel(Channel::outer);
  }
  void average(std::vector<float>& delta) override {
    for(size_t i = 0; i < delta.size(); ++i)
      delta[i] += decay_ * residual_[i];
    mean_.average(delta, residual_);
  }
  HeldBack heldBack() const override { return {residual_, {}}; }
  void setHeldBack(HeldBack h) override {
    ABORT_IF(h.residual.size() != residual_.size(), "{} residuals for a fragment of {} values", h.residual.size(),
             residual_.size());
    residual_ = std::move(h.residual);
  }

private:
  ChunkTopkMean mean_;
  float decay_;
  std::vector<float> residual_;
};

// The sparse sum: --sparse-allreduce where it names one that sums pairs whole, dsar-split where
// it names a dense one (the default).
std::string sparseSumAlgorithm(const Options& o) {
  std::string name = o.get<std::string>("sparse-allreduce");
  const AllreduceEntry* entry = findAllreduce(name);
  ABORT_IF(!entry, "--sparse-allreduce '{}' is unknown; available:{}", name, describeAllreduceAlgorithms());
  ABORT_IF(entry->kind == AllreduceKind::selection,
           "--outer-density sums the ranks' pairs whole: --sparse-allreduce '{}' keeps only a selection of the sum "
           "(give topka, ssar-recdbl, ssar-split or dsar-split)",
           name);
  return entry->kind == AllreduceKind::sparseSum ? name : "dsar-split";
}

}  // namespace

void validateOuterExchangeOptions(const Options& o) {
  int bits = o.get<int>("outer-quantize-bits");
  float density = o.get<float>("outer-density");
  float decay = o.get<float>("outer-error-decay");
  ABORT_IF(bits != 0 && bits != 8 && bits != 4 && bits != 2 && bits != 1,
           "--outer-quantize-bits {}: 8, 4, 2, 1, or 0 (fp32)", bits);
  ABORT_IF(density < 1.f && bits > 2,
           "--outer-density keeps each chunk's largest values in 1 or 2 bits (--outer-quantize-bits 1 or 2), or "
           "whole (0), not in {}",
           bits);
  ABORT_IF(decay != 1.f && !(density < 1.f && bits != 0),
           "--outer-error-decay decays what --outer-density with --outer-quantize-bits 1 or 2 held back");
  bool compressed = bits != 0 || density < 1.f;
  ABORT_IF(compressed && o.get<int>("local-steps") == 0,
           "--outer-quantize-bits and --outer-density compress the pseudo-gradients of --local-steps, which is off");
  if(density < 1.f && bits == 0)
    sparseSumAlgorithm(o);
}

std::unique_ptr<OuterExchange> createOuterExchange(const Options& o, Transport& transport, Range fragment,
                                                   const std::vector<size_t>& parameterStarts) {
  int bits = o.get<int>("outer-quantize-bits");
  float density = o.get<float>("outer-density");
  if(density < 1.f && bits != 0)
    return std::make_unique<ChunkTopkOuterExchange>(transport, fragment, parameterStarts, density, bits,
                                                    o.get<float>("outer-error-decay"));
  if(bits)
    return std::make_unique<CompressedOuterExchange>(
        transport, bits == 1 ? oneBitMean(transport, fragment, parameterStarts)
                             : std::make_unique<QuantizedAllreduce>(transport, fragment.size, bits));
  if(density < 1.f)
    return std::make_unique<SparseOuterExchange>(transport, fragment.size, density, sparseSumAlgorithm(o));
  return std::make_unique<DenseOuterExchange>(transport);
}

void saveHeldBack(Transport& transport, const std::vector<std::unique_ptr<OuterExchange>>& exchanges,
                  const std::vector<Range>& fragments, ModelState& state) {
  size_t n = fragments.empty() ? 0 : fragments.back().end();
  std::vector<float> residual(n, 0.f), ownerError(n, 0.f);
  bool holds = false, owns = false;  // the same on every rank: one kind of exchange for all fragments
  for(size_t p = 0; p < exchanges.size(); ++p) {
    OuterExchange::HeldBack h = exchanges[p]->heldBack();
    if(!h.residual.empty()) {
      placeRange(residual, fragments[p], h.residual);
      holds = true;
    }
    if(!h.ownerError.empty()) {
      placeRange(ownerError, fragments[p], h.ownerError);
      owns = true;
    }
  }
  if(!holds)
    return;
  ModelState mine;
  mine.n = n;
  mine.extras["residual"] = residual;
  if(owns)
    mine.extras[kServerError] = ownerError;
  std::vector<ModelState> all = gatherStates(transport, mine, "the pseudo-gradients' residuals");
  if(transport.rank() != 0)
    return;
  saveRankResiduals(all, state, kOuterResiduals);
  if(!owns)
    return;
  std::vector<float>& sum = state.extras[kServerError];  // the owners' chunks are disjoint
  sum.assign(n, 0.f);
  for(const ModelState& rank : all)
    for(size_t i = 0; i < n; ++i)
      sum[i] += rank.extras.at(kServerError)[i];
}

void restoreHeldBack(const ModelState& state, Transport& transport,
                     const std::vector<std::unique_ptr<OuterExchange>>& exchanges, const std::vector<Range>& fragments) {
  size_t n = fragments.empty() ? 0 : fragments.back().end();
  if(exchanges.empty() || exchanges[0]->heldBack().residual.empty())
    return;
  // a rank's residual as a term of the mean: on R' ranks, rank 0 carries the saved R ranks' R'/R-fold
  std::vector<float> residual = rankResidual(state, transport, n, float(transport.size()) / float(state.ranks),
                                             "residuals of the pseudo-gradients", kOuterResiduals);
  auto saved = state.extras.find(kServerError);
  std::vector<float> ownerError = saved != state.extras.end() ? saved->second : std::vector<float>(n, 0.f);
  ABORT_IF(residual.size() != n || ownerError.size() != n,
           "The checkpoint's residuals of the pseudo-gradients have {} and {} values for {} parameters",
           residual.size(), ownerError.size(), n);
  for(size_t p = 0; p < exchanges.size(); ++p)
    exchanges[p]->setHeldBack({rangeOf(residual, fragments[p]), rangeOf(ownerError, fragments[p])});
}

}  // namespace marian
