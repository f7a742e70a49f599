#include "training/exchange/outer_rounds.h"

#include "common/error.h"
#include "common/logging.h"
#include "common/timeline.h"

namespace marian {

namespace {

OuterSettings outerSettings(const Options& o) {
  OuterSettings s;
  s.nesterov = o.get<std::string>("outer-optimizer") == "nesterov";
  s.learnRate = o.get<float>("outer-learn-rate");
  s.momentum = o.get<float>("outer-momentum");
  return s;
}

const char* kStart = "outer-start";
const char* kMomentum = "outer-momentum";

}  // namespace

uint64_t OuterRounds::localSteps(const Options& o) {
  validateOuterExchangeOptions(o);
  uint64_t steps = uint64_t(o.get<int>("local-steps"));
  if(steps == 0)
    return 0;
  ABORT_IF(o.get<bool>("multi-node"), "--local-steps trains synchronously across ranks (--sync-sgd), not with the "
                                      "parameter server (--multi-node)");
  ABORT_IF(o.get<float>("compression-density") < 1.f || o.get<int>("powersgd-rank") > 0 || o.get<bool>("onebit-adam") ||
               o.get<bool>("zero-one-adam") || o.get<std::string>("local-gradients") != "off",
           "--local-steps exchanges the ranks' parameters once a round, not their gradients: it takes no gradient "
           "compression (--compression-density, --powersgd-rank, --onebit-adam, --zero-one-adam, --local-gradients)");
  return steps;
}

OuterRounds::OuterRounds(const Options& options, Transport& transport, const std::vector<Range>& ranges,
                         const std::vector<std::vector<float>>& values)
    : transport_(transport), steps_(localSteps(options)), ranges_(ranges),
      exchange_(createOuterExchange(options, transport, ranges.empty() ? 0 : ranges.back().end())) {
  ABORT_IF(steps_ == 0, "OuterRounds without --local-steps");
  ABORT_IF(values.size() != ranges.size(), "{} shards of values for {} ranges", values.size(), ranges.size());
  OuterSettings settings = outerSettings(options);
  for(const std::vector<float>& v : values)
    shards_.emplace_back(settings, v);
}

void OuterRounds::step(std::vector<std::vector<float>>& values) {
  timeline::Span span("outer step", "comm");
  // every shard's pseudo-gradient in one vector: one allreduce a round
  std::vector<float> delta;
  delta.reserve(ranges_.empty() ? 0 : ranges_.back().end());
  for(size_t k = 0; k < shards_.size(); ++k) {
    const std::vector<float>& start = shards_[k].start();
    ABORT_IF(values[k].size() != start.size(), "Shard {} has {} values, its outer state {}", k, values[k].size(),
             start.size());
    for(size_t i = 0; i < start.size(); ++i)
      delta.push_back(start[i] - values[k][i]);
  }
  exchange_->average(delta);
  size_t at = 0;
  for(size_t k = 0; k < shards_.size(); ++k) {
    std::vector<float> mean(delta.begin() + long(at), delta.begin() + long(at + values[k].size()));
    at += values[k].size();
    values[k] = shards_[k].step(mean);
  }
}

void OuterRounds::saveTo(ModelState& state) const {
  exchange_->saveTo(state);  // collective: before rank 0's own arrays
  std::vector<float>& start = state.extras[kStart];
  std::vector<float>& momentum = state.extras[kMomentum];
  start.resize(state.n);
  momentum.resize(state.n);
  for(size_t k = 0; k < shards_.size(); ++k) {
    const OuterOptimizer& shard = shards_[k];
    std::copy(shard.start().begin(), shard.start().end(), start.begin() + long(ranges_[k].offset));
    std::copy(shard.momentum().begin(), shard.momentum().end(), momentum.begin() + long(ranges_[k].offset));
  }
}

void OuterRounds::restoreFrom(const ModelState& state) {
  exchange_->restoreFrom(state);
  auto start = state.extras.find(kStart), momentum = state.extras.find(kMomentum);
  bool saved = start != state.extras.end();
  ABORT_IF(saved != (momentum != state.extras.end()), "The checkpoint holds one of '{}' and '{}' without the other",
           kStart, kMomentum);
  if(!saved && transport_.rank() == 0)
    LOG(info, "[training] The checkpoint has no outer state (saved without --local-steps): the first round starts "
              "from its parameters");
  if(saved)
    ABORT_IF(start->second.size() != state.n || momentum->second.size() != state.n,
             "The checkpoint's outer state has {} and {} values for {} parameters", start->second.size(),
             momentum->second.size(), state.n);
  // without an outer state, every rank from the saved parameters (the ranks' mean where they differ)
  const std::vector<float>& from = saved ? start->second : state.values;
  for(size_t k = 0; k < shards_.size(); ++k) {
    Range r = ranges_[k];
    shards_[k].start().assign(from.begin() + long(r.offset), from.begin() + long(r.end()));
    if(saved)
      shards_[k].momentum().assign(momentum->second.begin() + long(r.offset), momentum->second.begin() + long(r.end()));
    else
      std::fill(shards_[k].momentum().begin(), shards_[k].momentum().end(), 0.f);
  }
}

}  // namespace marian
