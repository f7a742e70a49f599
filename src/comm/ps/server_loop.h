#pragma once
// defines: marian::ServerLoop — a node's server thread (seed 004, Algorithm 2/7/9): receives
// pushes and pulls from any client on the toServer channel, answers on the toClient channel
// with the client's id as tag, until its own rank sends it `stop`.
#include <atomic>
#include <functional>
#include <thread>

#include "comm/transport.h"
#include "comm/ps/server_shard.h"

namespace marian {

class ServerLoop {
public:
  // The node's state for a checkpoint: its shard's and its clients' (a pullState's reply).
  using NodeState = std::function<ModelState()>;
  // timeoutSeconds bounds how long a reply may wait for its client (0: forever)
  ServerLoop(Transport& transport, ServerShard& shard, NodeState nodeState, double timeoutSeconds = 0);
  ~ServerLoop();  // stops the thread
  void stop();
  // Every reply from now on says that this rank's training has ended (rank 0's: the job's).
  void announceEnd() { ending_ = true; }

private:
  void run();    // the thread: serve(), and an error in it ends the job naming it
  void serve();  // answers pulls and pushes until the stop message
  Transport& transport_;
  ServerShard& shard_;
  NodeState nodeState_;
  double timeout_;
  std::atomic<bool> ending_{false};
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace marian
