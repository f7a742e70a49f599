#include "comm/ps/message.h"

#include <cstddef>
#include <cstring>

#include "common/byte_record.h"
#include "tensors/kernels.h"

namespace marian {

namespace {
constexpr const char* kWhat = "Parameter-server message";

uint64_t payloadCount(const Message& m) {
  const MessageHeader& h = m.header;
  return Message::isSparse(h.kind) ? m.sparse.size() : h.kind == MessageKind::replyState ? m.blob.size() : m.dense.size();
}
}  // namespace

std::vector<char> Message::pack() const {
  MessageHeader h = header;
  h.count = payloadCount(*this);
  ByteWriter w;
  w.reserve(sizeof(h) + h.count * entryBytes(h.kind));
  w.put(h);
  if(h.kind == MessageKind::replyState) {
    w.putArray(blob);
  } else if(isSparse(h.kind)) {
    putSparse(w, sparse.view());
  } else {
    w.putArray(dense);
  }
  return w.take();
}

std::vector<char> Message::packDense(MessageHeader h, Tensor values) {
  ABORT_IF(isSparse(h.kind) || h.kind == MessageKind::replyState, "packDense given message kind {}", uint32_t(h.kind));
  h.count = values.size();
  std::vector<char> bytes(sizeof(h) + h.count * sizeof(float));
  std::memcpy(bytes.data(), &h, sizeof(h));
  if(h.count)
    kernels::copy(Tensor(bytes.data() + sizeof(h), Shape({int(h.count)}), Type::float32, cpuDevice()), values);
  return bytes;
}

MessageView Message::read(const std::vector<char>& bytes) {
  ByteReader r(bytes, kWhat);
  MessageView m;
  m.header = r.get<MessageHeader>();
  uint32_t kind = uint32_t(m.header.kind);
  ABORT_IF(kind < uint32_t(MessageKind::pushDense) || kind > uint32_t(MessageKind::replyState),
           "{} of {} bytes has the unknown kind {}", kWhat, bytes.size(), kind);
  uint64_t n = m.header.count;
  ABORT_IF(n > r.left() || r.left() != n * entryBytes(m.header.kind),
           "{} of kind {} has {} bytes of entries, its header announces {} entries of {} bytes", kWhat, kind, r.left(), n,
           entryBytes(m.header.kind));
  m.payload = bytes.data() + sizeof(MessageHeader);
  // vector storage is aligned for any value; the header's size keeps the payload aligned too
  static_assert(sizeof(MessageHeader) % alignof(float) == 0 && sizeof(MessageHeader) % alignof(uint32_t) == 0);
  return m;
}

Message Message::unpack(const std::vector<char>& bytes) {
  MessageView v = read(bytes);
  Message m;
  m.header = v.header;
  uint64_t n = v.header.count;
  if(v.header.kind == MessageKind::replyState) {
    m.blob.assign(v.payload, v.payload + n);
  } else if(isSparse(v.header.kind)) {
    SparseView s = v.sparse();
    m.sparse.indices.assign(s.indices, s.indices + n);
    m.sparse.values.assign(s.values, s.values + n);
  } else {
    Tensor d = v.dense();
    m.dense.assign(d.f32(), d.f32() + n);
  }
  return m;
}

void Message::setTrainingEnds(std::vector<char>& packed, bool ends) {
  ABORT_IF(packed.size() < sizeof(MessageHeader), "setTrainingEnds on {} bytes", packed.size());
  uint32_t flag = ends ? 1 : 0;
  std::memcpy(packed.data() + offsetof(MessageHeader, trainingEnds), &flag, sizeof(flag));
}

Tensor MessageView::dense() const {
  ABORT_IF(Message::isSparse(header.kind) || header.kind == MessageKind::replyState,
           "Message of kind {} read as dense values", uint32_t(header.kind));
  // const_cast: the tensor is only read (Tensor has no read-only form)
  return Tensor(const_cast<char*>(payload), Shape({int(header.count)}), Type::float32, cpuDevice());
}

SparseView MessageView::sparse() const {
  ABORT_IF(!Message::isSparse(header.kind), "Message of kind {} read as sparse pairs", uint32_t(header.kind));
  return sparseAt(payload, size_t(header.count));
}

}  // namespace marian
