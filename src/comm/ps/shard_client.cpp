#include "comm/ps/shard_client.h"

#include <cmath>

#include "common/timeline.h"
#include "tensors/kernels.h"

namespace marian {

namespace {
constexpr const char* kResidualPrefix = "dropping-residual.client";
std::string residualName(int client) { return kResidualPrefix + std::to_string(client); }
std::string exchangesName(int client) { return "exchanges.client" + std::to_string(client); }
std::string velocityName(int client) { return "dropping-velocity.client" + std::to_string(client); }
}  // namespace

ShardClient::ShardClient(int id, ShardLayout layout, Transport* transport, ServerShard* localShard,
                         const Compression& compression, int clients, double timeoutSeconds, uint64_t seed,
                         Device device)
    : id_(id), layout_(layout), transport_(transport), localShard_(localShard), compression_(compression),
      clients_(clients), timeout_(timeoutSeconds), versions_(size_t(layout.nodes), 0) {
  if(compression_.compresses())
    for(int s = 0; s < layout_.nodes; ++s)
      selectors_.push_back(std::make_unique<TopkSelector>(layout_.node(s).size, TopkMethod::sampled,
                                                          seed * 1000003ull + uint64_t(s), 1, device,
                                                          compression_.momentum));
}

void ShardClient::exchange(Tensor grads, Tensor params, float lr, Tensor unsent) {
  int self = transport_ ? transport_->rank() : 0;
  double keep;
  bool fullReply;
  {
    std::lock_guard<std::mutex> step(mutex_);
    keep = compression_.keepAt(exchanges_);
    fullReply = compression_.local != LocalGradients::off && compression_.averageFreq > 0 &&
                (exchanges_ + 1) % compression_.averageFreq == 0;
  }
  if(!unsent.empty())
    kernels::fill(unsent, 0.f);
  if(compression_.compresses())
    compression_.clipLocally(grads, clients_, 1.0);
  ExchangeStats local;
  // start at a different shard on every node so that the nodes do not queue at the same server
  for(int k = 0; k < layout_.nodes; ++k) {
    int shard = (self + k) % layout_.nodes;
    Range range = layout_.node(shard);
    std::unique_lock<std::mutex> step(mutex_);
    Message push;
    push.header.client = id_;
    push.header.shard = shard;
    push.header.lr = lr;
    push.header.version = versions_[size_t(shard)];
    push.header.fullReply = fullReply ? 1 : 0;
    push.header.kind = keep < 1.0 ? MessageKind::pushSparse : MessageKind::pushDense;
    Tensor g = grads.slice(range.offset, range.size);
    std::vector<char> pushed;  // the push as it goes on the wire
    if(keep < 1.0) {
      Tensor mine = unsent.empty() ? Tensor() : unsent.slice(range.offset, range.size);
      if(!mine.empty())
        kernels::copy(mine, selectors_[size_t(shard)]->residual());
      push.sparse = selectors_[size_t(shard)]->select(g, Compression::kept(range.size, keep));
      if(!mine.empty()) {  // residual after - residual before
        kernels::scale(mine, -1.f);
        kernels::add(mine, selectors_[size_t(shard)]->residual());
      }
      pushed = push.pack();
    } else
      pushed = Message::packDense(push.header, g);  // the gradients straight into the message

    std::vector<char> replied;  // the reply's bytes, read in place below
    if(shard == self && localShard_) {
      timeline::Span span("local shard", "update");
      replied = localShard_->updateAndReply(Message::read(pushed));
    } else {
      {
        timeline::Span span("send", "comm");
        transport_->send(Channel::toServer, shard, id_, pushed, timeout_);
      }
      timeline::Span span("receive", "comm");
      replied = transport_->recv(Channel::toClient, shard, id_, timeout_,
                                 format("the reply of shard {} to client {}", shard, id_))
                    .bytes;
      local.sent += pushed.size();
      local.received += replied.size();
    }
    MessageView reply = Message::read(replied);
    ABORT_IF(reply.header.client != id_ || reply.header.shard != shard,
             "Client {} got the reply for client {} of shard {} from shard {}", id_, reply.header.client,
             reply.header.shard, shard);
    versions_[size_t(shard)] = reply.header.version;
    if(reply.header.trainingEnds)
      heardEnd_ = true;
    local.staleness += reply.header.staleness;
    local.exchanges += 1;
    Tensor p = params.slice(range.offset, range.size);
    if(reply.header.kind == MessageKind::replyDense) {
      ABORT_IF(reply.header.count != range.size, "Shard {} replied {} values for {}", shard, reply.header.count,
               range.size);
      kernels::copy(p, reply.dense());
    } else {
      SparseView delta = reply.sparse();
      for(size_t j = 0; j < delta.size; ++j)
        ABORT_IF(delta.indices[j] >= range.size, "Shard {} sent a delta at {} outside its {} values", shard,
                 delta.indices[j], range.size);
      kernels::scatterAdd(p, delta.indices, delta.values, delta.size);
    }
  }
  {
    std::lock_guard<std::mutex> step(mutex_);
    ++exchanges_;
  }
  std::lock_guard<std::mutex> lock(statsMutex_);
  stats_.exchanges += local.exchanges;
  stats_.staleness += local.staleness;
  stats_.sent += local.sent;
  stats_.received += local.received;
}

std::vector<float> ShardClient::residual() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<float> all(layout_.total, 0.f);
  for(size_t s = 0; s < selectors_.size(); ++s) {
    placeRange(all, layout_.node(int(s)), selectors_[s]->state().residual);
  }
  return all;
}

bool ShardClient::savedResiduals(const ModelState& state) {
  return state.hasExtras(kResidualPrefix);
}

ExchangeStats ShardClient::takeStats() {
  std::lock_guard<std::mutex> lock(statsMutex_);
  ExchangeStats s = stats_;
  stats_ = ExchangeStats();
  return s;
}

void ShardClient::saveTo(ModelState& state) const {
  std::lock_guard<std::mutex> lock(mutex_);
  state.counters[exchangesName(id_)] = exchanges_;
  if(selectors_.empty())
    return;
  std::vector<float>& all = state.extras[residualName(id_)];
  all.assign(layout_.total, 0.f);
  std::vector<float> velocity(compression_.momentum > 0.f ? layout_.total : 0, 0.f);
  for(size_t s = 0; s < selectors_.size(); ++s) {
    TopkSelector::State st = selectors_[s]->state();
    placeRange(all, layout_.node(int(s)), st.residual);
    if(!st.velocity.empty())
      placeRange(velocity, layout_.node(int(s)), st.velocity);
    state.counters["dropping-calls.client" + std::to_string(id_)] = st.calls;
  }
  if(!velocity.empty())
    state.extras[velocityName(id_)] = velocity;
}

void ShardClient::restoreFrom(const ModelState& state, bool sameClients) {
  std::vector<float> residual;
  if(sameClients) {
    auto it = state.extras.find(residualName(id_));
    if(it != state.extras.end())
      residual = it->second;
  } else if(id_ == 0) {
    residual = state.sumOfExtras(kResidualPrefix, 1.f);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto count = [&](const std::string& name) {
    auto it = state.counters.find(name);
    return it == state.counters.end() ? uint64_t(0) : it->second;
  };
  // a client of another layout continues the warm-up where the clients of the saved run were
  exchanges_ = count(exchangesName(sameClients ? id_ : 0));
  // the shards' versions as they come back (ServerShard::restoreFrom): the first replies are not
  // stale by every reply before the checkpoint
  for(int s = 0; s < layout_.nodes; ++s)
    versions_[size_t(s)] = count(ServerShard::versionName(s));
  uint64_t calls = count("dropping-calls.client" + std::to_string(sameClients ? id_ : 0));
  // momentum correction's velocity is the client's own: another layout starts it at zero
  auto velocity = state.extras.find(velocityName(id_));
  bool hasVelocity = sameClients && velocity != state.extras.end();
  ABORT_IF(hasVelocity && velocity->second.size() != layout_.total, "A velocity of {} values for a model of {}",
           velocity->second.size(), layout_.total);
  for(size_t s = 0; s < selectors_.size(); ++s) {
    Range range = layout_.node(int(s));
    TopkSelector::State st;
    st.calls = calls;
    st.residual.assign(range.size, 0.f);
    if(!residual.empty()) {
      ABORT_IF(residual.size() != layout_.total, "A residual of {} values for a model of {}", residual.size(),
               layout_.total);
      st.residual = rangeOf(residual, range);
    }
    if(hasVelocity)
      st.velocity = rangeOf(velocity->second, range);
    selectors_[s]->setState(st);
  }
}

}  // namespace marian
