#pragma once
// defines: marian::MpiTransport — the one place that calls MPI: initialisation with
// MPI_THREAD_MULTIPLE (several client threads and a server thread per rank call MPI at once),
// point-to-point messages on separate channels, byte counting, bounded waits and abort.
// Waiting polls with MPI_Iprobe/MPI_Test and sleeps between polls, so an idle rank does not
// burn a core (OpenMPI's blocking calls busy-poll, which on small machines starves compute).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace marian {

enum class Channel { toServer = 0, toClient = 1, collective = 2 };

class MpiTransport {
public:
  struct Message {
    int source = -1, tag = -1;
    std::vector<char> bytes;
  };

  // Starts MPI once per process; a library without MPI_THREAD_MULTIPLE is an error that says so.
  static MpiTransport& start(int* argc, char*** argv);
  static MpiTransport* instance();
  ~MpiTransport();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Completes when MPI is done with the buffer; a peer that takes no delivery within
  // timeoutSeconds (0: forever) aborts the job (large messages need the receiver's help).
  void send(Channel channel, int dest, int tag, const std::vector<char>& bytes, double timeoutSeconds = 0);
  // The next message on `channel` from `source` with `tag` (-1: any). Waits at most
  // timeoutSeconds (0: forever), then aborts the whole job naming `what` and the peer.
  Message recv(Channel channel, int source, int tag, double timeoutSeconds, const std::string& what);
  // Sends to `dest` and receives from `source` at once (both with `tag`): the step of ring and
  // butterfly collectives, where every rank sends first and would otherwise wait on the other.
  Message exchange(Channel channel, int dest, int source, int tag, const std::vector<char>& bytes,
                   double timeoutSeconds, const std::string& what);
  // A send that runs while the caller does other work (a pipelined tree sends to two children
  // and receives the next chunk at once); `bytes` must stay alive until finishSend.
  struct PendingSend {
    void* request = nullptr;
    int dest = -1;
    size_t size = 0;
  };
  PendingSend startSend(Channel channel, int dest, int tag, const std::vector<char>& bytes);
  void finishSend(PendingSend& send, double timeoutSeconds, const std::string& what);
  // MPI_Allreduce (sum) of n floats in place, on the collective channel, polling.
  void allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what);
  // Rank 0's value on every rank (a seed drawn at random must be the same everywhere).
  uint64_t broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what);
  // All ranks, polling; aborts after timeoutSeconds (0: forever).
  void barrier(double timeoutSeconds, const std::string& what);
  [[noreturn]] void abort(const std::string& why);

  uint64_t bytesSent() const { return sent_; }
  uint64_t bytesReceived() const { return received_; }

private:
  MpiTransport() = default;
  int rank_ = 0, size_ = 1;
  std::atomic<uint64_t> sent_{0}, received_{0};
  void* comms_[3] = {nullptr, nullptr, nullptr};  // MPI_Comm per channel (opaque here)
  void* control_ = nullptr;
};

}  // namespace marian
