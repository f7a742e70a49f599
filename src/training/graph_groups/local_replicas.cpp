#include "training/graph_groups/local_replicas.h"

#include <algorithm>

#include "comm/allreduce/algorithms.h"
#include "comm/state_gather.h"
#include "common/logging.h"
#include "common/timeline.h"
#include "tensors/kernels.h"

namespace marian {

namespace {
std::string replicaName(int rank, const std::string& array) {
  return "replica.rank" + std::to_string(rank) + "." + array;
}
}  // namespace

LocalReplicas::LocalReplicas(Transport& transport, bool averageMoments)
    : transport_(transport), averageMoments_(averageMoments),
      ring_(createAllreduce("ring", transport, AllreduceSettings())) {}

void LocalReplicas::average(const std::vector<std::unique_ptr<ParameterShard>>& shards) {
  timeline::Span span("average replicas", "comm");
  float inverse = 1.f / float(transport_.size());
  for(auto& s : shards)
    for(Tensor t : s->replicaTensors(averageMoments_)) {
      std::vector<float> host = kernels::toHost(t);
      ring_->sumDense(host);
      for(float& v : host)
        v *= inverse;
      kernels::fromHost(t, host);
    }
}

std::vector<float> LocalReplicas::mean(std::vector<float> values) {
  transport_.allreduceSum(values.data(), values.size(), transport_.peerTimeout(), "averaging the ranks' copies");
  for(float& v : values)
    v /= float(transport_.size());
  return values;
}

void LocalReplicas::gather(ModelState& state) {
  ModelState mine;
  mine.n = state.n;
  mine.values = state.values;
  mine.smoothed = state.smoothed;
  mine.optimizer = state.optimizer;
  std::vector<ModelState> all = gatherStates(transport_, mine, "the parameters");
  if(transport_.rank() != 0)
    return;
  int ranks = transport_.size();
  auto keepAndAverage = [&](const std::string& name, std::vector<float>& mean, auto array) {
    if(mean.empty())
      return;
    std::fill(mean.begin(), mean.end(), 0.f);
    for(int r = 0; r < ranks; ++r) {
      const std::vector<float>& theirs = array(all[size_t(r)]);
      ABORT_IF(theirs.size() != mean.size(), "Rank {} sent {} values of '{}' for {}", r, theirs.size(), name,
               mean.size());
      state.extras[replicaName(r, name)] = theirs;
      for(size_t i = 0; i < mean.size(); ++i)
        mean[i] += theirs[i] / float(ranks);
    }
  };
  keepAndAverage("values", state.values, [](const ModelState& s) -> const std::vector<float>& { return s.values; });
  keepAndAverage("smoothed", state.smoothed, [](const ModelState& s) -> const std::vector<float>& { return s.smoothed; });
  for(auto& [name, mean] : state.optimizer)
    keepAndAverage(name, mean, [&](const ModelState& s) -> const std::vector<float>& { return s.optimizer.at(name); });
}

std::optional<ModelState> LocalReplicas::ownCopy(const ModelState& state) const {
  int rank = transport_.rank();
  auto values = state.extras.find(replicaName(rank, "values"));
  if(state.ranks != transport_.size() || values == state.extras.end()) {
    if(values != state.extras.end() && rank == 0)
      LOG(info, "[training] The checkpoint's copies of {} rank(s) resume as their mean", state.ranks);
    return std::nullopt;
  }
  ModelState own;
  own.n = state.n;
  own.optimizerSteps = state.optimizerSteps;
  own.values = values->second;
  if(!state.smoothed.empty())
    own.smoothed = state.extras.at(replicaName(rank, "smoothed"));
  for(const auto& [name, mean] : state.optimizer)
    own.optimizer[name] = state.extras.at(replicaName(rank, name));
  return own;
}

}  // namespace marian
