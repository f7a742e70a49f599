#pragma once
// defines: the parameter server's messages. Every message carries (kind, client id, shard) in its
// header, and receivers check them, so that messages of several client threads of one rank
// cannot be confused (the defect of Marian's 2017 multi-node fork).
#include <cstdint>
#include <vector>

#include "comm/sparse_vector.h"
#include "tensors/tensor.h"

namespace marian {

enum class MessageKind : uint32_t {
  pushDense = 1,   // client -> server: dense gradients of the shard
  pushSparse = 2,  // client -> server: dropped gradients
  pull = 3,        // client -> server: send me the shard's parameters (no update)
  stop = 4,        // rank -> its own server thread: quit
  replyDense = 5,  // server -> client: the shard's parameters
  replySparse = 6, // server -> client: dropped deltas
  pullState = 7,   // rank 0 -> server: the node's state for a checkpoint (no update)
  replyState = 8,  // server -> rank 0: a packed ModelState
};

struct MessageHeader {
  MessageKind kind;
  int32_t client;     // global client id: rank * devices + device
  int32_t shard;      // node (rank) that owns the shard
  float lr;           // learning rate of this update (pushes)
  uint32_t smoothed;  // pull: the moving average instead of the parameters
  uint32_t fullReply; // push with delta dropping: reply the parameters, and record them as the client's
  uint32_t trainingEnds; // reply: the server's rank has left its training loop (ServerLoop::announceEnd)
  uint32_t unused = 0;   // the padding the uint64s below would get, named so that every byte is defined
  uint64_t version;   // push: shard version the client last saw; reply: version after the update
  uint64_t staleness; // reply: updates by other clients since this client's last exchange
  uint64_t count;     // payload entries
};

static_assert(sizeof(MessageHeader) == 56, "a header without hidden padding, so its bytes round-trip");

// A message read in place from its bytes (checked as Message::unpack checks them): the payload
// points into the bytes, which must outlive the view. The parameter server reads pushes and
// replies this way, so their payloads are not copied out of the received bytes.
struct MessageView {
  MessageHeader header{};
  const char* payload = nullptr;  // header.count entries of the kind's layout

  // A dense payload as a host tensor (read-only use: the optimizer reads it as its gradients).
  Tensor dense() const;
  SparseView sparse() const;
};

struct Message {
  MessageHeader header{};
  std::vector<float> dense;
  SparseVector sparse;
  std::vector<char> blob;  // replyState

  static bool isSparse(MessageKind k) { return k == MessageKind::pushSparse || k == MessageKind::replySparse; }
  // bytes per payload entry
  static size_t entryBytes(MessageKind k) {
    return isSparse(k) ? kSparsePairBytes : k == MessageKind::replyState ? 1 : sizeof(float);
  }

  std::vector<char> pack() const;
  // A dense message of `values` (on any device) packed straight from the tensor: one copy.
  static std::vector<char> packDense(MessageHeader header, Tensor values);
  // A message off the wire: its header, then exactly `count` entries of its kind; anything
  // else (an unknown kind, a short or long message) is an Error.
  static MessageView read(const std::vector<char>& bytes);
  static Message unpack(const std::vector<char>& bytes);
  // Sets the header's trainingEnds in packed bytes (the server loop marks the shard's replies).
  static void setTrainingEnds(std::vector<char>& packed, bool ends);
};

}  // namespace marian
