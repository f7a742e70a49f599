#include "comm/shard_client.h"

#include <cmath>

#include "common/timeline.h"
#include "tensors/kernels.h"

namespace marian {

ShardClient::ShardClient(int id, ShardLayout layout, MpiTransport* transport, ServerShard* localShard,
                         double keep, size_t warmup, double timeoutSeconds, uint64_t seed, Device device)
    : id_(id), layout_(layout), transport_(transport), localShard_(localShard), keep_(keep),
      warmup_(warmup), timeout_(timeoutSeconds), dropper_(layout.total, seed, device),
      versions_(size_t(layout.nodes), 0) {}

double ShardClient::currentKeep() const {
  if(keep_ >= 1.0 || warmup_ == 0 || exchanges_ >= warmup_)
    return keep_;
  return std::pow(keep_, double(exchanges_) / double(warmup_));  // 1 -> keep over the warm-up
}

void ShardClient::exchange(const float* grads, float* params, float lr) {
  exchangeWith(
      [&](size_t offset, size_t n, double keep, Message& push) {
        if(keep < 1.0)
          push.sparse = dropper_.drop(grads + offset, offset, n, keep);
        else
          push.dense.assign(grads + offset, grads + offset + n);
      },
      [&](size_t offset, const Message& reply) {
        if(reply.header.kind == MessageKind::replyDense)
          std::copy(reply.dense.begin(), reply.dense.end(), params + offset);
        else
          reply.sparse.addTo(params + offset);
      },
      lr);
}

// On the device: the residual, threshold and selection stay there; the host sees the selected
// entries (or, without dropping, the dense slice), and sparse replies are scattered in place.
void ShardClient::exchange(Tensor grads, Tensor params, float lr) {
  exchangeWith(
      [&](size_t offset, size_t n, double keep, Message& push) {
        if(keep < 1.0)
          push.sparse = dropper_.drop(grads.slice(offset, n), offset, keep);
        else
          push.dense = kernels::toHost(grads.slice(offset, n));
      },
      [&](size_t offset, const Message& reply) {
        if(reply.header.kind == MessageKind::replyDense) {
          kernels::fromHost(params.slice(offset, reply.dense.size()), reply.dense);
        } else {
          kernels::scatterAdd(params.slice(offset, params.size() - offset), reply.sparse.indices,
                              reply.sparse.values);
        }
      },
      lr);
}

void ShardClient::exchangeWith(const PushFn& fillPush, const ApplyFn& applyReply, float lr) {
  int self = transport_ ? transport_->rank() : 0;
  double keep = currentKeep();
  ExchangeStats local;
  // start at a different shard on every node so that the nodes do not queue at the same server
  for(int k = 0; k < layout_.nodes; ++k) {
    int shard = (self + k) % layout_.nodes;
    auto [offset, n] = layout_.node(shard);
    Message push;
    push.header.client = id_;
    push.header.shard = shard;
    push.header.lr = lr;
    push.header.version = versions_[size_t(shard)];
    push.header.kind = keep < 1.0 ? MessageKind::pushSparse : MessageKind::pushDense;
    fillPush(offset, n, keep, push);
    if(keep < 1.0) {
      if(sentTotal_.empty())
        sentTotal_.assign(layout_.total, 0.f);
      push.sparse.addTo(sentTotal_.data() + offset);
    }

    Message reply;
    if(shard == self && localShard_) {
      timeline::Span span("local shard", "update");
      reply = localShard_->push(push);
    } else {
      std::vector<char> bytes = push.pack();
      {
        timeline::Span span("send", "comm");
        transport_->send(Channel::toServer, shard, id_, bytes, timeout_);
      }
      timeline::Span span("receive", "comm");
      MpiTransport::Message m = transport_->recv(Channel::toClient, shard, id_, timeout_,
                                                 format("the reply of shard {} to client {}", shard, id_));
      reply = Message::unpack(m.bytes);
      local.bytesSent += bytes.size();
      local.bytesReceived += m.bytes.size();
    }
    ABORT_IF(reply.header.client != id_ || reply.header.shard != shard,
             "Client {} got the reply for client {} of shard {} from shard {}", id_, reply.header.client,
             reply.header.shard, shard);
    versions_[size_t(shard)] = reply.header.version;
    local.staleness += reply.header.staleness;
    local.exchanges += 1;
    if(reply.header.kind == MessageKind::replyDense) {
      ABORT_IF(reply.dense.size() != n, "Shard {} replied {} values for {}", shard, reply.dense.size(), n);
    } else {
      for(uint32_t i : reply.sparse.indices)
        ABORT_IF(i >= n, "Shard {} sent a delta at {} outside its {} values", shard, i, n);
    }
    applyReply(offset, reply);
  }
  ++exchanges_;
  std::lock_guard<std::mutex> lock(statsMutex_);
  stats_.exchanges += local.exchanges;
  stats_.staleness += local.staleness;
  stats_.bytesSent += local.bytesSent;
  stats_.bytesReceived += local.bytesReceived;
}

ExchangeStats ShardClient::takeStats() {
  std::lock_guard<std::mutex> lock(statsMutex_);
  ExchangeStats s = stats_;
  stats_ = ExchangeStats();
  return s;
}

}  // namespace marian
