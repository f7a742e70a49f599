#include "comm/state_gather.h"

namespace marian {

namespace {
// Apart from every allreduce step's tag (oktopk's highest phase starts at 5 << 12) and within
// 32767, the largest tag every MPI library must accept (UCX allows 2^23 - 1). Successive gathers
// of one save share it: messages of one source and tag arrive in order.
constexpr int kCheckpointTag = 32766;
}  // namespace

std::vector<ModelState> gatherStates(Transport& transport, const ModelState& mine, const std::string& what) {
  if(transport.rank() != 0) {
    transport.send(Channel::collective, 0, kCheckpointTag, mine.pack(), transport.peerTimeout());
    return {};
  }
  std::vector<ModelState> all;
  all.push_back(mine);
  for(int r = 1; r < transport.size(); ++r)
    all.push_back(ModelState::unpack(
        transport.recv(Channel::collective, r, kCheckpointTag, transport.peerTimeout(),
                       what + " of rank " + std::to_string(r) + " for a checkpoint")
            .bytes));
  return all;
}

}  // namespace marian
