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
  ServerLoop(MpiTransport& transport, ServerShard& shard);
  ~ServerLoop();  // stops the thread
  void stop();

private:
  void run();
  MpiTransport& transport_;
  ServerShard& shard_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace marian
