#include "comm/ps/shard_reader.h"

#include "common/error.h"
#include "common/logging.h"

namespace marian {

ShardReader::ShardReader(Transport& transport, int devicesPerRank, double timeoutSeconds)
    : transport_(transport), id_(devicesPerRank * transport.size() + transport.rank()), timeout_(timeoutSeconds) {}

Message ShardReader::ask(int shard, MessageKind request, bool smoothed, MessageKind expected, const std::string& what) {
  Message m;
  m.header.kind = request;
  m.header.client = id_;
  m.header.shard = shard;
  m.header.smoothed = smoothed;
  transport_.send(Channel::toServer, shard, id_, m.pack(), timeout_);
  Message reply = Message::unpack(transport_.recv(Channel::toClient, shard, id_, timeout_, what).bytes);
  ABORT_IF(reply.header.kind != expected, "Shard {} answered a read of {} with message kind {}", shard, what,
           uint32_t(reply.header.kind));
  return reply;
}

std::vector<float> ShardReader::values(int shard, bool smoothed) {
  return ask(shard, MessageKind::pull, smoothed, MessageKind::replyDense, "the parameters of shard " + std::to_string(shard))
      .dense;
}

ModelState ShardReader::state(int shard) {
  Message reply = ask(shard, MessageKind::pullState, false, MessageKind::replyState,
                      "the state of shard " + std::to_string(shard) + " for a checkpoint");
  LOG(debug, "[comm] The state of shard {} for a checkpoint: {} bytes", shard, reply.blob.size());
  return ModelState::unpack(reply.blob);
}

}  // namespace marian
