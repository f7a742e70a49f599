#include "comm/state_gather.h"

#include "comm/message_tags.h"

namespace marian {

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
