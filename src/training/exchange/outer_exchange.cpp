#include "training/exchange/outer_exchange.h"

#include <cmath>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/quantized.h"
#include "comm/state_gather.h"
#include "comm/topk_selection.h"
#include "common/error.h"
#include "training/exchange/codec_checkpoint.h"

namespace marian {

namespace {

const char* kServerError = "outer-server-error";

class DenseOuterExchange : public OuterExchange {
public:
  explicit DenseOuterExchange(Transport& transport)
      : transport_(transport), ring_(createAllreduce("ring", transport)) {}
  void average(std::vector<float>& delta) override {
    ring_->sumDense(delta);
    float inverse = 1.f / float(transport_.size());
    for(float& g : delta)
      g *= inverse;
  }
  AllreduceBytes takeBytes() override { return ring_->takeBytes(); }

private:
  Transport& transport_;
  std::unique_ptr<Allreduce> ring_;
};

// A rank's residual ("residual", global layout) gathered on rank 0 as "outer-residual.rankR";
// `more`: further extras of this rank, added up over the ranks (disjoint chunks) under their names.
void saveResiduals(Transport& transport, size_t n, const std::vector<float>& residual,
                   const std::map<std::string, std::vector<float>>& more, ModelState& state, const char* what) {
  ModelState mine;
  mine.n = n;
  mine.extras["residual"] = residual;
  for(const auto& [name, values] : more)
    mine.extras[name] = values;
  std::vector<ModelState> all = gatherStates(transport, mine, what);
  if(transport.rank() != 0)
    return;
  saveRankResiduals(all, state, kOuterResiduals);
  for(const auto& [name, values] : more) {
    std::vector<float>& sum = state.extras[name];
    sum.assign(n, 0.f);
    for(const ModelState& rank : all)
      for(size_t i = 0; i < n; ++i)
        sum[i] += rank.extras.at(name)[i];
  }
}

// A rank's residual as a term of the mean: on R' ranks, rank 0 carries the saved R ranks' R'/R-fold.
std::vector<float> restoreResidual(const ModelState& state, const Transport& transport, size_t n, const char* what) {
  return rankResidual(state, transport, n, float(transport.size()) / float(state.ranks), what, kOuterResiduals);
}

class QuantizedOuterExchange : public OuterExchange {
public:
  QuantizedOuterExchange(Transport& transport, size_t n, int bits)
      : transport_(transport), quantized_(transport, n, bits) {}
  void average(std::vector<float>& delta) override { quantized_.averageCompressed(delta); }
  AllreduceBytes takeBytes() override { return quantized_.takeBytes(); }

  void saveTo(ModelState& state) override {
    size_t n = quantized_.size();
    std::vector<float> server(n, 0.f);
    Range c = quantized_.chunk(transport_.rank());
    std::copy(quantized_.serverError().begin(), quantized_.serverError().end(), server.begin() + long(c.offset));
    saveResiduals(transport_, n, quantized_.workerError(), {{kServerError, server}}, state,
                  "the quantized pseudo-gradients' errors");
  }
  void restoreFrom(const ModelState& state) override {
    size_t n = quantized_.size();
    std::vector<float> worker = restoreResidual(state, transport_, n, "quantization errors of the pseudo-gradients");
    auto saved = state.extras.find(kServerError);
    std::vector<float> server = saved != state.extras.end() ? saved->second : std::vector<float>(n, 0.f);
    ABORT_IF(server.size() != n, "The checkpoint's '{}' has {} values for {}", kServerError, server.size(), n);
    quantized_.setErrors(std::move(worker), rangeOf(server, quantized_.chunk(transport_.rank())));
  }

private:
  Transport& transport_;
  QuantizedAllreduce quantized_;
};

class SparseOuterExchange : public OuterExchange {
public:
  SparseOuterExchange(Transport& transport, size_t n, float density, const std::string& algorithm)
      : transport_(transport), n_(n), k_(std::max<size_t>(1, size_t(std::ceil(double(density) * double(n))))),
        selector_(n, TopkMethod::exact, 0), sum_(createAllreduce(algorithm, transport)) {}

  void average(std::vector<float>& delta) override {
    SparseVector sent = selector_.select(Tensor(delta.data(), Shape({int(n_)}), Type::float32, cpuDevice()), k_);
    AllreduceResult sum = sum_->reduce(sent, n_);
    ABORT_IF(sum.isSelection, "--outer-density needs the whole sum, which '{}' does not give", sum_->name());
    delta = sum.toDense(n_);
    float inverse = 1.f / float(transport_.size());
    for(float& g : delta)
      g *= inverse;
  }
  AllreduceBytes takeBytes() override { return sum_->takeBytes(); }

  void saveTo(ModelState& state) override {
    saveResiduals(transport_, n_, selector_.state().residual, {}, state, "the pseudo-gradients' residuals");
  }
  void restoreFrom(const ModelState& state) override {
    TopkSelector::State s = selector_.state();
    s.residual = restoreResidual(state, transport_, n_, "residuals of the pseudo-gradients");
    selector_.setState(s);
  }

private:
  Transport& transport_;
  size_t n_, k_;
  TopkSelector selector_;
  std::unique_ptr<Allreduce> sum_;
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
  ABORT_IF(bits != 0 && bits != 8 && bits != 4, "--outer-quantize-bits {}: 8, 4, or 0 (fp32)", bits);
  float density = o.get<float>("outer-density");
  ABORT_IF(bits != 0 && density < 1.f,
           "--outer-quantize-bits and --outer-density < 1 are two compressions of the pseudo-gradients: give one");
  bool compressed = bits != 0 || density < 1.f;
  ABORT_IF(compressed && o.get<int>("local-steps") == 0,
           "--outer-quantize-bits and --outer-density compress the pseudo-gradients of --local-steps, which is off");
  if(density < 1.f)
    sparseSumAlgorithm(o);
}

std::unique_ptr<OuterExchange> createOuterExchange(const Options& o, Transport& transport, size_t n) {
  if(int bits = o.get<int>("outer-quantize-bits"))
    return std::make_unique<QuantizedOuterExchange>(transport, n, bits);
  if(float density = o.get<float>("outer-density"); density < 1.f)
    return std::make_unique<SparseOuterExchange>(transport, n, density, sparseSumAlgorithm(o));
  return std::make_unique<DenseOuterExchange>(transport);
}

}  // namespace marian
