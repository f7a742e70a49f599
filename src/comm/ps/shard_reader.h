#pragma once
// defines: marian::ShardReader — how rank 0 reads another node's shard through that node's server
// thread (pull, pullState): its parameters or their moving average for validation and saving, or
// the node's whole state for a checkpoint. It asks under an id no device client has (the clients
// are rank x devices + device), so its replies cannot meet a client's.
#include <string>
#include <vector>

#include "comm/ps/message.h"
#include "comm/transport.h"
#include "optimizers/model_state.h"

namespace marian {

class ShardReader {
public:
  // devicesPerRank: the clients of every rank (ids below ranks x devicesPerRank are theirs).
  ShardReader(Transport& transport, int devicesPerRank, double timeoutSeconds);

  std::vector<float> values(int shard, bool smoothed);
  ModelState state(int shard);

private:
  // Sends `request` to shard's server thread and returns its reply, which must be of kind `expected`.
  Message ask(int shard, MessageKind request, bool smoothed, MessageKind expected, const std::string& what);

  Transport& transport_;
  int id_;
  double timeout_;
};

}  // namespace marian
