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
};

struct MessageHeader {
  MessageKind kind;
  int32_t client;     // global client id: rank * devices + device
  int32_t shard;      // node (rank) that owns the shard
  float lr;           // learning rate of this update (pushes)
  uint32_t smoothed;  // pull: the moving average instead of the parameters
  uint64_t version;   // push: shard version the client last saw; reply: version after the update
  uint64_t staleness; // reply: updates by other clients since this client's last exchange
  uint64_t count;     // payload entries
};

struct Message {
  MessageHeader header{};
  std::vector<float> dense;
  SparseVector sparse;

  std::vector<char> pack() const {
    MessageHeader h = header;
    bool isSparse = h.kind == MessageKind::pushSparse || h.kind == MessageKind::replySparse;
    h.count = isSparse ? sparse.size() : dense.size();
    std::vector<char> out(sizeof(h) + (isSparse ? sparse.bytes() : dense.size() * sizeof(float)));
    char* p = out.data();
    std::memcpy(p, &h, sizeof(h));
    p += sizeof(h);
    if(isSparse) {
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
    bool isSparse = m.header.kind == MessageKind::pushSparse || m.header.kind == MessageKind::replySparse;
    size_t expected = sizeof(MessageHeader) + n * (isSparse ? 8 : 4);
    ABORT_IF(bytes.size() != expected, "Parameter-server message of kind {} has {} bytes, its header says {}",
             uint32_t(m.header.kind), bytes.size(), expected);
    if(isSparse) {
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
