#pragma once
// defines: marian::ServerLoop — a node's server thread (seed 004, Algorithm 2/7/9): receives
// pushes and pulls from any client on the toServer channel, answers on the toClient channel
// with the client's id as tag, until its own rank sends it `stop`.
#include <thread>

#include "comm/mpi_transport.h"
#include "comm/server_shard.h"

namespace marian {

class ServerLoop {
public:
  // timeoutSeconds bounds how long a reply may wait for its client (0: forever)
  ServerLoop(MpiTransport& transport, ServerShard& shard, double timeoutSeconds = 0);
  ~ServerLoop();  // stops the thread
  void stop();

private:
  void run();
  MpiTransport& transport_;
  ServerShard& shard_;
  double timeout_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace marian
