#pragma once
// defines: marian::LocalReplicas — with --local-gradients the ranks' copies of the parameters
// drift apart (Aji et al. 2019): their periodic averaging (--local-average-freq, and with
// --local-average-state all the optimizer moments too), the mean that rank 0 validates, and in a
// checkpoint every rank's copy (extras "replica.rankR.ARRAY", the state's own arrays their mean:
// the exported model, and what another layout resumes from), each rank's own copy coming back on
// a resume of as many ranks.
#include <memory>
#include <optional>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "optimizers/parameter_shard.h"

namespace marian {

class LocalReplicas {
public:
  LocalReplicas(Transport& transport, bool averageMoments);

  // Each shard's values, moving average and (averageMoments) optimizer moments become their mean
  // over ranks. Collective.
  void average(const std::vector<std::unique_ptr<ParameterShard>>& shards);
  // The mean over ranks of this rank's `values`. Collective.
  std::vector<float> mean(std::vector<float> values);
  // Rank 0: every rank's arrays into `state` as extras, its arrays their mean. Collective.
  void gather(ModelState& state);
  // This rank's own copy, when the checkpoint holds one of as many ranks as now.
  std::optional<ModelState> ownCopy(const ModelState& state) const;

private:
  Transport& transport_;
  bool averageMoments_;
  std::unique_ptr<Allreduce> ring_;  // its bytes count with the allreduce's (the same channel)
};

}  // namespace marian
