// PowerSGD (Vogels et al. 2019, comm/powersgd.h): after --powersgd-start dense updates each
// bucket's matrices go as rank-r factors with error feedback through the bucket's dense sum; the
// residuals (global layout, like top-k's) and the warm-start Qs are kept in the checkpoint.
#include "comm/powersgd.h"
#include "comm/state_gather.h"
#include "common/logging.h"
#include "common/options.h"
#include "graph/parameters.h"
#include "training/exchange/codec_checkpoint.h"
#include "training/exchange/codecs.h"
#include "training/exchange/host_bucket_codec.h"

namespace marian {

namespace {

class PowerSgdCodec : public HostBucketCodec {
public:
  explicit PowerSgdCodec(const CodecSetting& s)
      : HostBucketCodec(s.layout), transport_(s.transport), start_(uint64_t(s.options.get<int>("powersgd-start"))) {
    int rank = s.options.get<int>("powersgd-rank");
    ABORT_IF(!s.parameters, "PowerSGD needs the parameters' shapes");
    // each bucket's matrices in the bucket's coordinates (buckets hold whole parameters)
    for(size_t b = 0; b < layout_.buckets(); ++b) {
      std::vector<PowerSgd::Matrix> matrices;
      size_t inBucket = 0;
      for(const Range& range : layout_.bucket(b)) {
        for(const Parameters::Entry& e : s.parameters->entries()) {
          size_t size = e.shape.elements(), cols = size_t(e.shape.back()), rows = cols ? size / cols : 0;
          bool inside = e.offset >= range.offset && e.offset + size <= range.end();
          if(inside && PowerSgd::compresses(rows, cols, rank))
            matrices.push_back({inBucket + (e.offset - range.offset), rows, cols});
        }
        inBucket += range.size;
      }
      // the same seed on every rank: the first Q is the same everywhere
      powerSgd_.push_back(std::make_unique<PowerSgd>(layout_.bucketSize(b), matrices, rank, s.seed * 7919 + b));
    }
  }

  void saveTo(ModelState& state) override {  // the residuals, and the shared warm-start Qs (rank 0's)
    size_t n = layout_.size();
    ModelState mine;
    mine.n = n;
    std::vector<float>& residual = mine.extras["residual"];
    residual.assign(n, 0.f);
    for(size_t b = 0; b < layout_.buckets(); ++b)
      layout_.placeBucket(b, powerSgd_[b]->residual(), residual);
    std::vector<ModelState> all = gatherStates(transport_, mine, "the PowerSGD residual");
    if(transport_.rank() != 0)
      return;
    saveRankResiduals(all, state);
    std::vector<float>& qs = state.extras["powersgd-q"];
    for(size_t b = 0; b < powerSgd_.size(); ++b) {
      qs.insert(qs.end(), powerSgd_[b]->qs().begin(), powerSgd_[b]->qs().end());
      state.counters[kQsOfBucket + std::to_string(b)] = powerSgd_[b]->qs().size();
    }
    state.counters["allreduce-buckets"] = layout_.buckets();
  }

  void restoreFrom(const ModelState& state) override {
    std::vector<float> residual = residualsInUnitsOf(state, /*momentum=*/false, transport_, "PowerSGD's residuals")
                                      ? rankResidual(state, transport_, layout_.size(), 1.f, "PowerSGD residuals")
                                      : std::vector<float>(layout_.size(), 0.f);
    for(size_t b = 0; b < layout_.buckets(); ++b)
      powerSgd_[b]->setResidual(layout_.takeBucket(b, residual));
    // the Qs are the buckets' matrices' in turn: they fit only buckets of the same matrices
    auto qs = state.extras.find("powersgd-q");
    bool fits = qs != state.extras.end() && state.counters.count("allreduce-buckets") &&
                state.counters.at("allreduce-buckets") == powerSgd_.size();
    for(size_t b = 0; fits && b < powerSgd_.size(); ++b) {
      auto saved = state.counters.find(kQsOfBucket + std::to_string(b));
      fits = saved != state.counters.end() && saved->second == powerSgd_[b]->qs().size();
    }
    if(!fits) {
      if(transport_.rank() == 0)
        LOG(warn, "[training] The checkpoint holds no PowerSGD warm start for these buckets (saved without one, or "
                  "with other buckets: another --bucket-size or model): Q starts again at random");
      return;
    }
    size_t at = 0;
    for(auto& p : powerSgd_) {
      size_t n = p->qs().size();
      p->setQs(std::vector<float>(qs->second.begin() + long(at), qs->second.begin() + long(at + n)));
      at += n;
    }
  }

protected:
  void reduceOnHost(size_t b, std::vector<float>& values, Allreduce& sum, uint64_t step) override {
    if(step >= start_)
      powerSgd_[b]->reduce(values, sum);
    else
      sum.sumDense(values);
  }

private:
  static constexpr const char* kQsOfBucket = "powersgd-q-values.";  // + the bucket: its Qs' values

  Transport& transport_;
  uint64_t start_;
  std::vector<std::unique_ptr<PowerSgd>> powerSgd_;  // per bucket
};

}  // namespace

std::unique_ptr<BucketCodec> createPowerSgdCodec(const CodecSetting& setting) {
  return std::make_unique<PowerSgdCodec>(setting);
}

}  // namespace marian
