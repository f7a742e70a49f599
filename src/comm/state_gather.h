#pragma once
// defines: gatherStates — every rank's part of a checkpoint (a ModelState: residuals, replicas)
// on rank 0, in rank order, through one tag. A collective: every rank calls it at the same point
// of the same save; ranks other than 0 get an empty list.
#include <string>
#include <vector>

#include "comm/transport.h"
#include "optimizers/model_state.h"

namespace marian {

// `what` names the part in the error of a rank that does not send it ("allreduce residuals").
std::vector<ModelState> gatherStates(Transport& transport, const ModelState& mine, const std::string& what);

}  // namespace marian
