#include "comm/ps/server_loop.h"

#include "common/fault_point.h"
#include "common/float_mode.h"
#include "common/timeline.h"

namespace marian {

ServerLoop::ServerLoop(Transport& transport, ServerShard& shard, NodeState nodeState, double timeoutSeconds)
    : transport_(transport), shard_(shard), nodeState_(std::move(nodeState)), timeout_(timeoutSeconds), thread_([this] { run(); }) {}

ServerLoop::~ServerLoop() { stop(); }

void ServerLoop::stop() {
  if(stopped_)
    return;
  stopped_ = true;
  Message m;
  m.header.kind = MessageKind::stop;
  m.header.shard = transport_.rank();
  try {
    transport_.send(Channel::toServer, transport_.rank(), 0, m.pack());
  } catch(const std::exception&) {
    // the job has stopped (ranks as threads: a failed rank stops their network); the thread's
    // receive ends with it, and the thread with that
  }
  thread_.join();
}

void ServerLoop::run() {
  flushDenormalsToZero();
  timeline::nameThisThread("server");
  try {
    serve();
  } catch(const std::exception& e) {  // the job cannot go on without this shard
    try {
      transport_.abort(format("rank {}: the parameter server thread failed: {}", transport_.rank(), e.what()));
    } catch(const std::exception&) {
      // ranks as threads: the abort stopped their network and throws to end the caller, which is
      // this thread, not a rank (an exception out of it would end the process unnamed)
    }
  }
}

void ServerLoop::serve() {
  for(;;) {
    Transport::Message in = transport_.recv(Channel::toServer, -1, -1, 0, "a push");
    MessageView m = Message::read(in.bytes);
    if(m.header.kind == MessageKind::stop)
      return;
    faultPoint("server", transport_.rank());
    std::vector<char> reply;
    if(m.header.kind == MessageKind::pull || m.header.kind == MessageKind::pullState) {
      Message r;
      r.header = m.header;
      r.header.kind = m.header.kind == MessageKind::pull ? MessageKind::replyDense : MessageKind::replyState;
      if(m.header.kind == MessageKind::pull)
        r.dense = shard_.values(m.header.smoothed != 0);
      else
        r.blob = nodeState_().pack();
      reply = r.pack();
    } else {
      ABORT_IF(m.header.client != in.tag, "Message of client {} arrived with tag {}", m.header.client, in.tag);
      timeline::Span span("server update", "update");
      reply = shard_.updateAndReply(m);
    }
    Message::setTrainingEnds(reply, ending_);
    transport_.send(Channel::toClient, in.source, in.tag, reply, timeout_);
  }
}

}  // namespace marian
