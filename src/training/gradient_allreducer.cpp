#include "training/gradient_allreducer.h"

#include <algorithm>
#include <cmath>

#include "comm/allreduce/sparse_ops.h"
#include "comm/state_gather.h"
#include "common/logging.h"
#include "tensors/kernels.h"

namespace marian {

void validateAllreduceOptions(const Options& o) {
  std::string name = o.get<std::string>("sparse-allreduce");
  ABORT_IF(!findAllreduce(name), "--sparse-allreduce '{}' is unknown; available:{}", name,
           describeAllreduceAlgorithms());
  float density = o.get<float>("compression-density");
  ABORT_IF(!(density > 0.f && density <= 1.f), "--compression-density must be in (0, 1], not {}", density);
  parseTopkMethod(o.get<std::string>("topk-selection"));
  Compression::fromOptions(o, density);  // its own checks
  ABORT_IF(o.get<int>("topk-reuse-every") < 1, "--topk-reuse-every must be >= 1");
  ABORT_IF(o.get<int>("oktopk-repartition-every") < 1, "--oktopk-repartition-every must be >= 1");
  ABORT_IF(o.get<int>("powersgd-rank", 0) > 0 && density < 1.f,
           "--powersgd-rank and --compression-density < 1 are two compressions: give one");
  ABORT_IF(o.get<int>("powersgd-rank", 0) > 0 && o.get<std::string>("local-gradients", "off") != "off",
           "--local-gradients needs top-k compression (--compression-density), not --powersgd-rank");
  bool zeroOne = o.get<bool>("zero-one-adam", false);
  if(sendsOneBit(o)) {
    const char* name = zeroOne ? "--zero-one-adam" : "--onebit-adam";
    ABORT_IF(zeroOne && o.get<bool>("onebit-adam", false),
             "--zero-one-adam and --onebit-adam: give one (0/1 Adam averages the momentum as 1-bit Adam does)");
    ABORT_IF(density < 1.f || o.get<int>("powersgd-rank", 0) > 0 || o.get<std::string>("local-gradients", "off") != "off",
             "{} compresses by itself: not with --compression-density < 1, --powersgd-rank or --local-gradients", name);
    ABORT_IF(o.get<std::string>("optimizer", "adam") != "adam", "{} needs --optimizer adam", name);
    ABORT_IF(o.get<int>("adam-freeze-variance-after", 0) < 1,
             "{} needs --adam-freeze-variance-after N >= 1: the variance frozen after N updates and the momentum "
             "sent in 1 bit from then on", name);
    ABORT_IF(o.get<bool>("onebit-update-direction", false) && o.get<int>("onebit-block-size", 0) > 0,
             "--onebit-update-direction takes its scale per parameter: not with --onebit-block-size");
    ABORT_IF(zeroOne && o.get<int>("adam-variance-update-scaler", 0) < 1,
             "--zero-one-adam needs --adam-variance-update-scaler kappa >= 1 (the paper's and DeepSpeed's: 16)");
  }
  ABORT_IF(o.get<bool>("onebit-update-direction", false) && !sendsOneBit(o),
           "--onebit-update-direction is a setting of --onebit-adam or --zero-one-adam");
  OneBitScale scale = oneBitScaleFromName(o.get<std::string>("onebit-scale", "rms"));
  ABORT_IF(scale != OneBitScale::rms && !sendsOneBit(o),
           "--onebit-scale is a setting of --onebit-adam or --zero-one-adam");
}

bool sendsOneBit(const Options& o) { return o.get<bool>("onebit-adam", false) || o.get<bool>("zero-one-adam", false); }

GradientAllreducer::GradientAllreducer(const Options& o, Transport& transport, const std::vector<Tensor>& shards,
                                       uint64_t seed, const std::vector<GradientBucket>& buckets,
                                       const Parameters* layout, const MomentumSource& momentum)
    : transport_(transport), buckets_(buckets), n_(0), density_(o.get<float>("compression-density")),
      compression_(Compression::fromOptions(o, density_)) {
  for(const Tensor& t : shards)
    n_ += t.size();
  validateAllreduceOptions(o);
  if(buckets_.empty())
    buckets_.push_back({{0, n_}});
  checkBucketsCover(buckets_, n_);
  for(const GradientBucket& bucket : buckets_)
    bucketSizes_.push_back(bucketSize(bucket));
  AllreduceSettings settings;
  settings.repartitionEvery = o.get<int>("oktopk-repartition-every");
  settings.thresholdEvery = o.get<int>("topk-reuse-every");
  for(size_t b = 0; b < buckets_.size(); ++b)
    algorithms_.push_back(createAllreduce(o.get<std::string>("sparse-allreduce"), transport, settings));
  method_ = parseTopkMethod(o.get<std::string>("topk-selection"));
  reuseEvery_ = o.get<int>("topk-reuse-every");
  seed_ = seed * 7919 + uint64_t(transport.rank());

  // pieces: every (bucket, shard) overlap; selectors numbered as before buckets (one per shard)
  // when there is one bucket, so their sample positions do not change
  bucketPieces_.resize(buckets_.size());
  dense_.resize(buckets_.size());
  for(size_t b = 0; b < buckets_.size(); ++b) {
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
  if(density_ < 1.0)
    for(size_t p = 0; p < pieces_.size(); ++p)
      selectors_.push_back(std::make_unique<TopkSelector>(pieces_[p].global.size, method_, seed_ + 104729 * p,
                                                          reuseEvery_, shards[pieces_[p].shard].device,
                                                          compression_.momentum));
  if(density_ < 1.0 && compression_.local != LocalGradients::off)
    for(const Piece& p : pieces_)
      localScratch_.push_back(std::make_unique<FlatBuffer>(shards[p.shard].device, Type::float32, p.global.size));

  if(sendsOneBit(o)) {
    ABORT_IF(!momentum.read, "1-bit Adam needs Adam's momentum");
    momentum_ = momentum;
    oneBitStart_ = uint64_t(o.get<int>("adam-freeze-variance-after"));
    oneBitClipNorm_ = o.get<float>("clip-norm", 0.f);
    if(o.get<bool>("zero-one-adam", false))
      zeroOneVariance_ = AdamVarianceSchedule::fromOptions(o);
    oneBitUpdateDirection_ = o.get<bool>("onebit-update-direction", false);
    ABORT_IF(oneBitUpdateDirection_ && !momentum.readVariance, "--onebit-update-direction needs Adam's variance");
    OneBitScale scale = oneBitScaleFromName(o.get<std::string>("onebit-scale", "rms"));
    for(size_t b = 0; b < buckets_.size(); ++b) {
      std::vector<size_t> starts = layout ? parameterStarts(b, *layout) : std::vector<size_t>{0};
      oneBitParameterStarts_.push_back(starts);
      oneBit_.push_back(std::make_unique<OneBitAllreduce>(
          transport, bucketSizes_[b],
          OneBitAllreduce::segmentStarts(starts, bucketSizes_[b], size_t(o.get<int>("onebit-block-size", 0)))));
      oneBit_.back()->setScale(scale);
    }
  }
  int rank = o.get<int>("powersgd-rank", 0);
  if(rank <= 0)
    return;
  ABORT_IF(!layout, "PowerSGD needs the parameters' shapes");
  powerSgdStart_ = uint64_t(o.get<int>("powersgd-start"));
  // each bucket's matrices in the bucket's coordinates (buckets hold whole parameters)
  for(size_t b = 0; b < buckets_.size(); ++b) {
    std::vector<PowerSgd::Matrix> matrices;
    size_t inBucket = 0;
    for(const Range& range : buckets_[b]) {
      for(const Parameters::Entry& e : layout->entries()) {
        size_t size = e.shape.elements(), cols = size_t(e.shape.back()), rows = cols ? size / cols : 0;
        bool inside = e.offset >= range.offset && e.offset + size <= range.end();
        if(inside && PowerSgd::compresses(rows, cols, rank))
          matrices.push_back({inBucket + (e.offset - range.offset), rows, cols});
      }
      inBucket += range.size;
    }
    // the same seed on every rank: the first Q is the same everywhere
    powerSgd_.push_back(std::make_unique<PowerSgd>(bucketSizes_[b], matrices, rank, seed * 7919 + b));
  }
}

std::vector<size_t> GradientAllreducer::parameterStarts(size_t b, const Parameters& layout) const {
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

void GradientAllreducer::placeBucket(size_t b, const std::vector<float>& inBucket, std::vector<float>& global) const {
  size_t at = 0;
  for(const Range& range : buckets_[b]) {
    std::copy(inBucket.begin() + long(at), inBucket.begin() + long(at + range.size), global.begin() + long(range.offset));
    at += range.size;
  }
}

std::vector<float> GradientAllreducer::takeBucket(size_t b, const std::vector<float>& global) const {
  ABORT_IF(global.size() != n_, "A checkpoint array of {} values for a gradient of {}", global.size(), n_);
  std::vector<float> mine;
  for(const Range& range : buckets_[b])
    mine.insert(mine.end(), global.begin() + long(range.offset), global.begin() + long(range.end()));
  return mine;
}

void GradientAllreducer::averageMomentum(size_t b, std::vector<float>& bucket) {
  std::vector<float> m(bucket.size());
  size_t at = 0;
  for(const Range& range : buckets_[b]) {
    momentum_.read(range, m.data() + at);
    at += range.size;
  }
  if(step_ == oneBitStart_)  // errors of 0/1 Adam's 1-bit gradients are not the momentum's
    oneBit_[b]->setErrors(std::vector<float>(oneBit_[b]->workerError().size(), 0.f),
                          std::vector<float>(oneBit_[b]->serverError().size(), 0.f));
  if(oneBitUpdateDirection_ && !oneBit_[b]->hasUnits())  // v is frozen from here on (also after a resume)
    oneBit_[b]->setUnits(updateDirectionUnits(b));
  // this rank's momentum if its gradient were the update's (the sum over ranks)
  float beta1 = momentum_.beta1, own = float(transport_.size());
  if(oneBitClipNorm_ > 0.f) {  // --clip-norm on the rank's own gradient (the bucket's share of it)
    double squares = 0;
    for(float x : bucket)
      squares += double(own * x) * double(own * x);
    double threshold = double(oneBitClipNorm_) * std::sqrt(double(bucket.size()) / double(n_));
    if(double norm = std::sqrt(squares); norm > threshold)
      own *= float(threshold / norm);
  }
  for(size_t i = 0; i < bucket.size(); ++i)
    bucket[i] = beta1 * m[i] + (1.f - beta1) * own * bucket[i];
  oneBit_[b]->averageCompressed(bucket);
  // the gradient whose momentum step gives the averaged momentum
  for(size_t i = 0; i < bucket.size(); ++i)
    bucket[i] = (bucket[i] - beta1 * m[i]) / (1.f - beta1);
}

// sqrt(v) without Adam's bias correction or epsilon: a factor common to a parameter does not change
// what its segment sends (its scale takes it).
std::vector<float> GradientAllreducer::updateDirectionUnits(size_t b) const {
  constexpr double kFloorOfMean = 0.01;
  std::vector<float> units(bucketSizes_[b]);
  size_t at = 0;
  for(const Range& range : buckets_[b]) {
    momentum_.readVariance(range, units.data() + at);
    at += range.size;
  }
  const std::vector<size_t>& starts = oneBitParameterStarts_[b];
  for(size_t p = 0; p < starts.size(); ++p) {
    size_t begin = starts[p], end = p + 1 < starts.size() ? starts[p + 1] : units.size();
    double sum = 0;
    for(size_t i = begin; i < end; ++i)
      sum += std::sqrt(double(std::max(units[i], 0.f)));
    double floor = end > begin ? kFloorOfMean * sum / double(end - begin) : 0.0;
    for(size_t i = begin; i < end; ++i)
      units[i] = floor > 0 ? float(std::max(std::sqrt(double(std::max(units[i], 0.f))), floor)) : 1.f;
  }
  return units;
}

void GradientAllreducer::prepareLocal(size_t i, Tensor piece) {
  compression_.clipLocally(piece, transport_.size(), double(piece.size()) / double(n_));
  if(compression_.local == LocalGradients::partial)
    kernels::copy(localScratch_[i]->all(), selectors_[i]->residual());
  else if(compression_.local == LocalGradients::sum)
    kernels::copy(localScratch_[i]->all(), piece);
}

void GradientAllreducer::addLocal(size_t i, Tensor piece) {
  if(compression_.local == LocalGradients::partial) {  // + (residual after - residual before)
    kernels::add(piece, selectors_[i]->residual());
    kernels::add(piece, localScratch_[i]->all(), -1.f);
  } else if(compression_.local == LocalGradients::sum) {
    kernels::add(piece, localScratch_[i]->all());
  }
}

Tensor GradientAllreducer::pieceOf(const Piece& p, const std::vector<Tensor>& shards) const {
  return shards[p.shard].slice(p.inShard, p.global.size);
}


void GradientAllreducer::reduce(const std::vector<Tensor>& shards) {
  for(size_t b = 0; b < buckets_.size(); ++b)
    reduceBucket(b, shards);
}

void GradientAllreducer::reduceBucket(size_t b, const std::vector<Tensor>& shards) {
  size_t n = 0;
  for(const Tensor& t : shards)
    n += t.size();
  ABORT_IF(n != n_, "GradientAllreducer for {} values was given shards of {}", n_, n);
  size_t size = bucketSizes_[b];
  const std::vector<size_t>& pieces = bucketPieces_[b];
  if(density_ >= 1.0) {  // dense, PowerSGD and 1-bit Adam: the whole bucket goes through the host
    std::vector<float>& dense = dense_[b];
    dense.resize(size);
    auto hostView = [&](const Piece& p) {
      return Tensor(dense.data() + p.inBucket, Shape({int(p.global.size)}), Type::float32, cpuDevice());
    };
    for(size_t p : pieces)
      kernels::copy(hostView(pieces_[p]), pieceOf(pieces_[p], shards));
    if(!oneBit_.empty() && step_ >= oneBitStart_) {
      averageMomentum(b, dense);
    } else if(zeroOneVariance_.kappa > 0 && !zeroOneVariance_.updatesAt(step_ + 1)) {
      // 0/1 Adam between the variance's steps: the sum as P x the 1-bit mean
      oneBit_[b]->averageCompressed(dense);
      for(float& x : dense)
        x *= float(transport_.size());
    } else if(!powerSgd_.empty() && step_ >= powerSgdStart_) {
      powerSgd_[b]->reduce(dense, *algorithms_[b]);
    } else {
      algorithms_[b]->sumDense(dense);
    }
    for(size_t p : pieces)
      kernels::copy(pieceOf(pieces_[p], shards), hostView(pieces_[p]));
    return;
  }
  std::vector<SparseVector> parts(pieces.size());
  for(size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces_[pieces[i]];
    prepareLocal(pieces[i], pieceOf(p, shards));
    parts[i] = selectors_[pieces[i]]->select(pieceOf(p, shards), keptOf(p.global.size));
  }
  // A bucket of one piece (one device per rank) is its selection as it is; several pieces are
  // joined in the bucket's coordinates.
  bool whole = pieces.size() == 1;
  SparseVector joined;
  for(size_t i = 0; i < pieces.size() && !whole; ++i)
    for(size_t e = 0; e < parts[i].size(); ++e) {
      joined.indices.push_back(uint32_t(pieces_[pieces[i]].inBucket + parts[i].indices[e]));
      joined.values.push_back(parts[i].values[e]);
    }
  AllreduceResult result = algorithms_[b]->reduce(whole ? parts[0] : joined, size, keptOf(size));
  for(size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces_[pieces[i]];
    Tensor piece = pieceOf(p, shards);
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

}  // namespace marian

namespace marian {

void GradientAllreducer::saveTo(ModelState& state) {
  if(!oneBit_.empty())
    return saveOneBit(state);
  if(!powerSgd_.empty()) {  // the residuals, and the shared warm-start Qs (rank 0's)
    ModelState mine;
    mine.n = n_;
    std::vector<float>& residual = mine.extras["residual"];
    residual.assign(n_, 0.f);
    for(size_t b = 0; b < buckets_.size(); ++b)
      placeBucket(b, powerSgd_[b]->residual(), residual);
    std::vector<ModelState> all = gatherStates(transport_, mine, "the PowerSGD residual");
    if(transport_.rank() != 0)
      return;
    saveRankResiduals(all, state);
    std::vector<float>& qs = state.extras["powersgd-q"];
    for(const auto& p : powerSgd_)
      qs.insert(qs.end(), p->qs().begin(), p->qs().end());
    state.counters["allreduce-buckets"] = buckets_.size();
    return;
  }
  if(selectors_.empty())
    return;  // dense, or no update yet: nothing is held back
  // this rank's residual and momentum velocity in the global layout, its selectors' thresholds
  ModelState mine;
  mine.n = n_;
  std::vector<float>& residual = mine.extras["residual"];
  std::vector<float>& thresholds = mine.extras["threshold"];
  std::vector<float> velocity(compression_.momentum > 0.f ? n_ : 0, 0.f);
  residual.assign(n_, 0.f);
  uint64_t calls = 0;
  for(size_t s = 0; s < selectors_.size(); ++s) {
    TopkSelector::State st = selectors_[s]->state();
    placeRange(residual, pieces_[s].global, st.residual);
    if(!st.velocity.empty())
      placeRange(velocity, pieces_[s].global, st.velocity);
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
  state.counters["allreduce-buckets"] = buckets_.size();
  for(size_t r = 0; r < all.size(); ++r)
    for(const auto& [name, array] : all[r].extras) {
      ABORT_IF(name != "threshold" && array.size() != n_, "Rank {} sent a {} of {} values for {}", r, name,
               array.size(), n_);
      state.extras["allreduce-" + name + ".rank" + std::to_string(r)] = array;
    }
}

void GradientAllreducer::restoreFrom(const ModelState& state) {
  if(!oneBit_.empty())
    return restoreOneBit(state);
  if(!powerSgd_.empty())
    return restorePowerSgd(state);
  if(selectors_.empty())
    return;
  auto saved = [&](const std::string& name, int r) -> const std::vector<float>* {
    auto it = state.extras.find(name + ".rank" + std::to_string(r));
    return it == state.extras.end() ? nullptr : &it->second;
  };
  if(!saved("allreduce-residual", 0)) {
    if(transport_.rank() == 0)
      LOG(warn, "[training] The checkpoint holds no allreduce residuals (saved dense or before the first update): "
                "they start at zero");
    return;
  }
  uint64_t calls = state.counters.count("allreduce-selector-calls") ? state.counters.at("allreduce-selector-calls") : 0;
  auto counter = [&](const std::string& name, uint64_t otherwise) {
    return state.counters.count(name) ? state.counters.at(name) : otherwise;
  };
  bool sameLayout = state.ranks == transport_.size() && counter("allreduce-shards", 0) == selectors_.size() &&
                    counter("allreduce-buckets", 1) == buckets_.size();
  int self = transport_.rank();
  if(algorithms_[0]->name() == "oktopk" && self == 0)
    LOG(warn, "[training] oktopk re-estimates its regions and global threshold at the first update after a resume: "
              "the Costs from there differ slightly from an uninterrupted run's");
  if(sameLayout) {
    const std::vector<float>& residual = *saved("allreduce-residual", self);
    const std::vector<float>* thresholds = saved("allreduce-threshold", self);
    const std::vector<float>* velocity = saved("allreduce-velocity", self);
    ABORT_IF(residual.size() != n_, "The checkpoint's residual of rank {} holds {} values, not {}", self,
             residual.size(), n_);
    ABORT_IF(velocity && velocity->size() != n_, "The checkpoint's velocity of rank {} holds {} values, not {}", self,
             velocity->size(), n_);
    for(size_t s = 0; s < selectors_.size(); ++s) {
      TopkSelector::State st;
      Range r = pieces_[s].global;
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
  ABORT_IF(state.n != n_, "The checkpoint holds a model of {} parameters, not {}", state.n, n_);
  std::vector<float> total = state.sumOfExtras("allreduce-residual.rank", 1.f);
  uint64_t next = (calls + uint64_t(reuseEvery_) - 1) / uint64_t(reuseEvery_) * uint64_t(reuseEvery_);
  for(size_t s = 0; s < selectors_.size(); ++s) {
    TopkSelector::State st;
    Range r = pieces_[s].global;
    st.residual.assign(r.size, 0.f);
    if(self == 0)
      st.residual = rangeOf(total, r);
    st.calls = next;
    selectors_[s]->setState(st);
  }
  if(self == 0)
    LOG(info, "[training] Checkpoint of {} rank(s) x {} device(s) resumed on {} rank(s) x {} shard(s) x {} "
              "bucket(s): the saved allreduce residuals are summed into rank 0's",
        state.ranks, state.devices, transport_.size(), selectors_.size(), buckets_.size());
}

void GradientAllreducer::saveRankResiduals(const std::vector<ModelState>& all, ModelState& state) const {
  for(size_t r = 0; r < all.size(); ++r)
    state.extras["allreduce-residual.rank" + std::to_string(r)] = all[r].extras.at("residual");
}

std::vector<float> GradientAllreducer::rankResidual(const ModelState& state, float otherLayoutScale,
                                                    const char* what) const {
  int self = transport_.rank();
  auto own = state.extras.find("allreduce-residual.rank" + std::to_string(self));
  if(state.ranks == transport_.size() && own != state.extras.end())
    return own->second;
  // another rank count: what every saved rank held back is owed once, by rank 0
  std::vector<float> total = state.sumOfExtras("allreduce-residual.rank", otherLayoutScale);
  if(self != 0 || total.empty())
    return std::vector<float>(n_, 0.f);
  LOG(info, "[training] Checkpoint of {} rank(s) resumed on {}: the saved {} are summed into rank 0's", state.ranks,
      transport_.size(), what);
  return total;
}

void GradientAllreducer::restorePowerSgd(const ModelState& state) {
  int self = transport_.rank();
  std::vector<float> residual = rankResidual(state, 1.f, "PowerSGD residuals");
  for(size_t b = 0; b < buckets_.size(); ++b)
    powerSgd_[b]->setResidual(takeBucket(b, residual));
  auto qs = state.extras.find("powersgd-q");
  size_t size = 0;
  for(const auto& p : powerSgd_)
    size += p->qs().size();
  if(qs == state.extras.end() || qs->second.size() != size) {
    if(self == 0)
      LOG(warn, "[training] The checkpoint holds no PowerSGD warm start for these buckets: Q starts again at random");
    return;
  }
  size_t at = 0;
  for(auto& p : powerSgd_) {
    size_t n = p->qs().size();
    p->setQs(std::vector<float>(qs->second.begin() + long(at), qs->second.begin() + long(at + n)));
    at += n;
  }
}

// 1-bit Adam's state: each rank's worker errors (as its residual, global layout) and the servers'
// errors, which cover the buckets' chunks once between them (one global array).
void GradientAllreducer::saveOneBit(ModelState& state) {
  ModelState mine;
  mine.n = n_;
  std::vector<float>& worker = mine.extras["residual"];
  std::vector<float>& server = mine.extras["server"];
  worker.assign(n_, 0.f);
  server.assign(n_, 0.f);
  for(size_t b = 0; b < buckets_.size(); ++b) {
    const OneBitAllreduce& o = *oneBit_[b];
    placeBucket(b, o.workerError(), worker);
    std::vector<float> inBucket(bucketSizes_[b], 0.f);
    Range c = o.chunk(transport_.rank());
    std::copy(o.serverError().begin(), o.serverError().end(), inBucket.begin() + long(c.offset));
    placeBucket(b, inBucket, server);
  }
  std::vector<ModelState> all = gatherStates(transport_, mine, "the 1-bit Adam errors");
  if(transport_.rank() != 0)
    return;
  saveRankResiduals(all, state);
  std::vector<float>& servers = state.extras["onebit-server-error"];
  servers.assign(n_, 0.f);
  for(size_t r = 0; r < all.size(); ++r) {
    const std::vector<float>& theirs = all[r].extras.at("server");
    for(size_t i = 0; i < n_; ++i)
      servers[i] += theirs[i];  // the chunks are disjoint
  }
  state.counters["allreduce-buckets"] = buckets_.size();
}

void GradientAllreducer::restoreOneBit(const ModelState& state) {
  int self = transport_.rank();
  // errors of the mean's terms: on R' ranks rank 0 carries the saved R ranks' R'/R-fold
  std::vector<float> worker =
      rankResidual(state, float(transport_.size()) / float(state.ranks), "1-bit Adam worker errors");
  auto server = state.extras.find("onebit-server-error");
  std::vector<float> servers = server != state.extras.end() ? server->second : std::vector<float>(n_, 0.f);
  for(size_t b = 0; b < buckets_.size(); ++b) {
    Range c = oneBit_[b]->chunk(self);
    std::vector<float> inBucket = takeBucket(b, servers);
    oneBit_[b]->setErrors(takeBucket(b, worker),
                          std::vector<float>(inBucket.begin() + long(c.offset), inBucket.begin() + long(c.end())));
  }
}

}  // namespace marian
