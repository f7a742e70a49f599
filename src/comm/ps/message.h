#pragma once
// defines: the parameter server's messages. Every message carries (kind, client id, shard) in its
// header, and receivers check them, so that messages of several client threads of one rank
// cannot be confused (the defect of Marian's 2017 multi-node fork).
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/sparse_vector.h"
#include "common/error.h"

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
  uint64_t version;   // push: shard version the client last saw; reply: version after the update
  uint64_t staleness; // reply: updates by other clients since this client's last exchange
  uint64_t count;     // payload entries
};

struct Message {
  MessageHeader header{};
  std::vector<float> dense;
  SparseVector sparse;
  std::vector<char> blob;  // replyState

  static bool isSparse(MessageKind k) { return k == MessageKind::pushSparse || k == MessageKind::replySparse; }
  // bytes per payload entry
  static size_t entryBytes(MessageKind k) { return isSparse(k) ? 8 : k == MessageKind::replyState ? 1 : 4; }

  std::vector<char> pack() const {
    MessageHeader h = header;
    h.count = isSparse(h.kind) ? sparse.size() : h.kind == MessageKind::replyState ? blob.size() : dense.size();
    std::vector<char> out(sizeof(h) + h.count * entryBytes(h.kind));
    char* p = out.data();
    std::memcpy(p, &h, sizeof(h));
    p += sizeof(h);
    if(h.kind == MessageKind::replyState) {
      if(!blob.empty())
        std::memcpy(p, blob.data(), blob.size());
    } else if(isSparse(h.kind) && sparse.size() != 0) {  // memcpy of an empty vector's null data is undefined
      std::memcpy(p, sparse.indices.data(), sparse.size() * sizeof(uint32_t));
      std::memcpy(p + sparse.size() * sizeof(uint32_t), sparse.values.data(), sparse.size() * sizeof(float));
    } else if(!dense.empty()) {
      std::memcpy(p, dense.data(), dense.size() * sizeof(float));
    }
    return out;
  }

  static Message unpack(const std::vector<char>& bytes) {
    Message m;
    ABORT_IF(bytes.size() < sizeof(MessageHeader), "Parameter-server message of {} bytes has no header", bytes.size());
    std::memcpy(&m.header, bytes.data(), sizeof(MessageHeader));
    const char* p = bytes.data() + sizeof(MessageHeader);
    size_t n = m.header.count;
    ABORT_IF(n > bytes.size(), "Parameter-server message of {} bytes announces {} entries", bytes.size(), n);
    size_t expected = sizeof(MessageHeader) + n * entryBytes(m.header.kind);
    ABORT_IF(bytes.size() != expected, "Parameter-server message of kind {} has {} bytes, its header says {}",
             uint32_t(m.header.kind), bytes.size(), expected);
    if(n == 0) {
      return m;  // nothing to copy (memcpy into an empty vector's null data is undefined)
    } else if(m.header.kind == MessageKind::replyState) {
      m.blob.assign(p, p + n);
    } else if(isSparse(m.header.kind)) {
      m.sparse.indices.resize(n);
      m.sparse.values.resize(n);
      std::memcpy(m.sparse.indices.data(), p, n * sizeof(uint32_t));
      std::memcpy(m.sparse.values.data(), p + n * sizeof(uint32_t), n * sizeof(float));
    } else {
      m.dense.resize(n);
      std::memcpy(m.dense.data(), p, n * sizeof(float));
    }
    return m;
  }
};

}  // namespace marian
