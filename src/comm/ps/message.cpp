#include "comm/ps/message.h"

#include "common/byte_record.h"

namespace marian {

std::vector<char> Message::pack() const {
  MessageHeader h = header;
  h.count = isSparse(h.kind) ? sparse.size() : h.kind == MessageKind::replyState ? blob.size() : dense.size();
  ByteWriter w;
  w.reserve(sizeof(h) + h.count * entryBytes(h.kind));
  w.put(h);
  if(h.kind == MessageKind::replyState) {
    w.putArray(blob);
  } else if(isSparse(h.kind)) {
    w.putArray(sparse.indices);
    w.putArray(sparse.values);
  } else {
    w.putArray(dense);
  }
  return w.take();
}

Message Message::unpack(const std::vector<char>& bytes) {
  const char* what = "Parameter-server message";
  ByteReader r(bytes, what);
  Message m;
  m.header = r.get<MessageHeader>();
  uint32_t kind = uint32_t(m.header.kind);
  ABORT_IF(kind < uint32_t(MessageKind::pushDense) || kind > uint32_t(MessageKind::replyState),
           "{} of {} bytes has the unknown kind {}", what, bytes.size(), kind);
  uint64_t n = m.header.count;
  ABORT_IF(n > r.left() || r.left() != n * entryBytes(m.header.kind),
           "{} of kind {} has {} bytes of entries, its header announces {} entries of {} bytes", what, kind, r.left(), n,
           entryBytes(m.header.kind));
  if(m.header.kind == MessageKind::replyState) {
    m.blob = r.getArray<char>(n);
  } else if(isSparse(m.header.kind)) {
    m.sparse.indices = r.getArray<uint32_t>(n);
    m.sparse.values = r.getArray<float>(n);
  } else {
    m.dense = r.getArray<float>(n);
  }
  r.expectEnd();
  return m;
}

}  // namespace marian
