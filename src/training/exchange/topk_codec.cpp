// Top-k with residuals (--compression-density < 1; seeds 000-002): each piece (a bucket's part
// of a shard) adds its residual, selects density x its size where it lives (so from a GPU only
// the selection crosses to the host) and keeps the rest; the bucket's algorithm sums the
// selections (global top-k schemes, gtopk and oktopk, put back what they did not select); the sum
// is scattered back into the shards. Compression (comm/compression.h) adds the density's warm-up,
// DGC's momentum correction and local clipping, and local gradients.
#include "comm/allreduce/sparse_ops.h"
#include "comm/state_gather.h"
#include "comm/topk_selection.h"
#include "common/logging.h"
#include "common/options.h"
#include "tensors/kernels.h"
#include "training/exchange/codec_checkpoint.h"
#include "training/exchange/codecs.h"

namespace marian {

namespace {

class TopkCodec : public BucketCodec {
public:
  explicit TopkCodec(const CodecSetting& s)
      : transport_(s.transport), layout_(s.layout), compression_(s.compression),
        reuseEvery_(s.options.get<int>("topk-reuse-every")), oktopk_(s.options.get<std::string>("sparse-allreduce") == "oktopk") {
    TopkMethod method = parseTopkMethod(s.options.get<std::string>("topk-selection"));
    uint64_t seed = s.seed * 7919 + uint64_t(transport_.rank());
    // one selector per piece, numbered as one per shard when there is one bucket
    const std::vector<BucketLayout::Piece>& pieces = layout_.pieces();
    for(size_t p = 0; p < pieces.size(); ++p)
      selectors_.push_back(std::make_unique<TopkSelector>(pieces[p].global.size, method, seed + 104729 * p, reuseEvery_,
                                                          s.shards[pieces[p].shard].device, compression_.momentum));
    if(compression_.local != LocalGradients::off)
      for(const BucketLayout::Piece& p : pieces)
        localScratch_.push_back(std::make_unique<FlatBuffer>(s.shards[p.shard].device, Type::float32, p.global.size));
  }

  void reduce(size_t b, const std::vector<Tensor>& shards, Allreduce& sum, uint64_t step) override {
    const std::vector<size_t>& pieces = layout_.piecesOf(b);
    const std::vector<BucketLayout::Piece>& all = layout_.pieces();
    std::vector<SparseVector> parts(pieces.size());
    for(size_t i = 0; i < pieces.size(); ++i) {
      const BucketLayout::Piece& p = all[pieces[i]];
      prepareLocal(pieces[i], layout_.pieceOf(p, shards));
      parts[i] = selectors_[pieces[i]]->select(layout_.pieceOf(p, shards), compression_.keptOf(p.global.size, step));
    }
    // A bucket of one piece (one device per rank) is its selection as it is; several pieces are
    // joined in the bucket's coordinates.
    bool whole = pieces.size() == 1;
    SparseVector joined;
    for(size_t i = 0; i < pieces.size() && !whole; ++i)
      for(size_t e = 0; e < parts[i].size(); ++e) {
        joined.indices.push_back(uint32_t(all[pieces[i]].inBucket + parts[i].indices[e]));
        joined.values.push_back(parts[i].values[e]);
      }
    size_t size = layout_.bucketSize(b);
    AllreduceResult result = sum.reduce(whole ? parts[0] : joined, size, compression_.keptOf(size, step));
    for(size_t i = 0; i < pieces.size(); ++i) {
      const BucketLayout::Piece& p = all[pieces[i]];
      Tensor piece = layout_.pieceOf(p, shards);
      size_t at = p.inBucket;
      if(result.isDense) {
        kernels::fromHost(piece, std::vector<float>(result.dense.begin() + long(at),
                                                    result.dense.begin() + long(at + p.global.size)));
      } else {
        SparseVector relative;  // the piece's part of the result in its own coordinates
        if(!whole)
          relative = sliceFrom(result.sparse, uint32_t(at), uint32_t(at + p.global.size));
        const SparseVector& mine = whole ? result.sparse : relative;
        if(result.isSelection)  // what the global selection left out goes back to the residual
          selectors_[pieces[i]]->restoreUnselected(parts[i], mine);
        kernels::fill(piece, 0.f);
        kernels::scatterAdd(piece, mine.indices, mine.values);
      }
      addLocal(pieces[i], piece);
    }
  }

  // This rank's residual and momentum velocity in the global layout, its selectors' thresholds.
  void saveTo(ModelState& state) override {
    size_t n = layout_.size();
    ModelState mine;
    mine.n = n;
    std::vector<float>& residual = mine.extras["residual"];
    std::vector<float>& thresholds = mine.extras["threshold"];
    std::vector<float> velocity(compression_.momentum > 0.f ? n : 0, 0.f);
    residual.assign(n, 0.f);
    uint64_t calls = 0;
    for(size_t s = 0; s < selectors_.size(); ++s) {
      TopkSelector::State st = selectors_[s]->state();
      placeRange(residual, layout_.pieces()[s].global, st.residual);
      if(!st.velocity.empty())
        placeRange(velocity, layout_.pieces()[s].global, st.velocity);
      thresholds.push_back(st.threshold);
      calls = st.calls;
    }
    if(!velocity.empty())
      mine.extras["velocity"] = std::move(velocity);
    std::vector<ModelState> all = gatherStates(transport_, mine, "the allreduce residual");
    if(transport_.rank() != 0)
      return;
    state.counters["allreduce-selector-calls"] = calls;
    state.counters["allreduce-shards"] = selectors_.size();  // pieces: shards x buckets
    state.counters["allreduce-buckets"] = layout_.buckets();
    for(size_t r = 0; r < all.size(); ++r)
      for(const auto& [name, array] : all[r].extras) {
        ABORT_IF(name != "threshold" && array.size() != n, "Rank {} sent a {} of {} values for {}", r, name,
                 array.size(), n);
        state.extras["allreduce-" + name + ".rank" + std::to_string(r)] = array;
      }
  }

  void restoreFrom(const ModelState& state) override;

private:
  // Before piece i selects: local clipping, and what local gradients need afterwards.
  void prepareLocal(size_t i, Tensor piece) {
    compression_.clipLocally(piece, transport_.size(), double(piece.size()) / double(layout_.size()));
    if(compression_.local == LocalGradients::partial)
      kernels::copy(localScratch_[i]->all(), selectors_[i]->residual());
    else if(compression_.local == LocalGradients::sum)
      kernels::copy(localScratch_[i]->all(), piece);
  }
  // After the sum is in piece i: this rank's own unsent part added (local gradients).
  void addLocal(size_t i, Tensor piece) {
    if(compression_.local == LocalGradients::partial) {  // + (residual after - residual before)
      kernels::add(piece, selectors_[i]->residual());
      kernels::add(piece, localScratch_[i]->all(), -1.f);
    } else if(compression_.local == LocalGradients::sum) {
      kernels::add(piece, localScratch_[i]->all());
    }
  }

  Transport& transport_;
  const BucketLayout& layout_;
  Compression compression_;
  int reuseEvery_;
  bool oktopk_;
  std::vector<std::unique_ptr<TopkSelector>> selectors_;    // one per piece
  std::vector<std::unique_ptr<FlatBuffer>> localScratch_;  // per piece: its residual or gradient before selection
};

void TopkCodec::restoreFrom(const ModelState& state) {
  size_t n = layout_.size();
  auto saved = [&](const std::string& name, int r) -> const std::vector<float>* {
    auto it = state.extras.find(name + ".rank" + std::to_string(r));
    return it == state.extras.end() ? nullptr : &it->second;
  };
  if(!saved(kGradientResiduals, 0)) {
    if(transport_.rank() == 0)
      LOG(warn, "[training] The checkpoint holds no allreduce residuals (saved dense or before the first update): "
                "they start at zero");
    return;
  }
  if(!residualsInUnitsOf(state, /*momentum=*/false, transport_, "the top-k residuals"))
    return;
  auto counter = [&](const std::string& name, uint64_t otherwise) {
    return state.counters.count(name) ? state.counters.at(name) : otherwise;
  };
  uint64_t calls = counter("allreduce-selector-calls", 0);
  bool sameLayout = state.ranks == transport_.size() && counter("allreduce-shards", 0) == selectors_.size() &&
                    counter("allreduce-buckets", 1) == layout_.buckets();
  int self = transport_.rank();
  if(oktopk_ && self == 0)
    LOG(warn, "[training] oktopk re-estimates its regions and global threshold at the first update after a resume: "
              "the Costs from there differ slightly from an uninterrupted run's");
  if(sameLayout) {
    const std::vector<float>& residual = *saved(kGradientResiduals, self);
    const std::vector<float>* thresholds = saved("allreduce-threshold", self);
    const std::vector<float>* velocity = saved("allreduce-velocity", self);
    ABORT_IF(residual.size() != n, "The checkpoint's residual of rank {} holds {} values, not {}", self,
             residual.size(), n);
    ABORT_IF(velocity && velocity->size() != n, "The checkpoint's velocity of rank {} holds {} values, not {}", self,
             velocity->size(), n);
    for(size_t s = 0; s < selectors_.size(); ++s) {
      TopkSelector::State st;
      Range r = layout_.pieces()[s].global;
      st.residual = rangeOf(residual, r);
      if(velocity)  // momentum correction's velocity; none saved: it starts at zero
        st.velocity = rangeOf(*velocity, r);
      st.calls = calls;
      st.threshold = thresholds && s < thresholds->size() ? (*thresholds)[s] : 0.f;
      selectors_[s]->setState(st);
    }
    return;
  }
  // Another layout: what every saved rank held back is owed once to the sum, so rank 0 takes
  // the sum of all residuals; a reused threshold is recomputed at the next call; momentum
  // correction's velocities start again at zero (a velocity is a rank's own).
  std::vector<float> total = state.sumOfExtras(std::string(kGradientResiduals) + ".rank", 1.f);
  uint64_t next = (calls + uint64_t(reuseEvery_) - 1) / uint64_t(reuseEvery_) * uint64_t(reuseEvery_);
  for(size_t s = 0; s < selectors_.size(); ++s) {
    TopkSelector::State st;
    Range r = layout_.pieces()[s].global;
    st.residual.assign(r.size, 0.f);
    if(self == 0)
      st.residual = rangeOf(total, r);
    st.calls = next;
    selectors_[s]->setState(st);
  }
  if(self == 0)
    LOG(info, "[training] Checkpoint of {} rank(s) x {} device(s) resumed on {} rank(s) x {} shard(s) x {} "
              "bucket(s): the saved allreduce residuals are summed into rank 0's",
        state.ranks, state.devices, transport_.size(), selectors_.size(), layout_.buckets());
}

}  // namespace

std::unique_ptr<BucketCodec> createTopkCodec(const CodecSetting& setting) {
  return std::make_unique<TopkCodec>(setting);
}

}  // namespace marian
