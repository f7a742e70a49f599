#pragma once
// defines: marian::MpiTransport — the Transport of the programs, and the one place that calls
// MPI: initialisation with MPI_THREAD_MULTIPLE (several client threads and a server thread per
// rank call MPI at once), one communicator per channel, bounded waits and abort. Waiting polls
// with MPI_Iprobe/MPI_Test and sleeps between polls, so an idle rank does not burn a core
// (OpenMPI's blocking calls busy-poll, which on small machines starves compute).
#include "comm/transport.h"

namespace marian {

class MpiTransport : public Transport {
public:
  // Starts MPI once per process (the programs' entry points); a library without
  // MPI_THREAD_MULTIPLE is an error that says so. Library code takes a Transport& instead.
  static MpiTransport& start(int* argc, char*** argv);
  // The started transport, or null when the process runs without MPI.
  static MpiTransport* instance();
  ~MpiTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // MPI_Allreduce (sum), polling.
  void allreduceSum(float* values, size_t n, double timeoutSeconds, const std::string& what) override;
  uint64_t broadcastFromRoot(uint64_t value, double timeoutSeconds, const std::string& what) override;
  void barrier(double timeoutSeconds, const std::string& what) override;
  // Prints `why` and ends every process of the job (MPI_Abort).
  [[noreturn]] void abort(const std::string& why) override;

protected:
  void sendImpl(Channel channel, int dest, int tag, const std::vector<char>& bytes, double timeoutSeconds) override;
  Message recvImpl(Channel channel, int source, int tag, double timeoutSeconds, const std::string& what) override;
  Message exchangeImpl(Channel channel, int dest, int source, int tag, const std::vector<char>& bytes,
                       double timeoutSeconds, const std::string& what) override;
  PendingSend startSendImpl(Channel channel, int dest, int tag, const void* data, size_t size) override;
  void finishSendImpl(PendingSend& send, double timeoutSeconds, const std::string& what) override;
  void startRecvImpl(PendingRecv& recv) override;
  void finishRecvImpl(PendingRecv& recv, double timeoutSeconds, const std::string& what) override;

private:
  MpiTransport() = default;
  int rank_ = 0, size_ = 1;
  void* comms_[kChannels] = {nullptr, nullptr, nullptr};  // MPI_Comm per channel (opaque here)
  void* control_ = nullptr;                               // broadcast and barrier
};

}  // namespace marian
