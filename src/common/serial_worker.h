#pragma once
// defines: marian::SerialWorker — one thread that runs the jobs posted to it in their order, while
// the poster goes on; wait(ticket) blocks until a job has run and rethrows what it threw. The
// streamed exchanges of local steps (OuterRounds) run on one: collectives, so every rank must run
// them in the same order. The destructor runs what is still posted, then stops: the other ranks
// run the same jobs, so a collective left posted completes (while an error unwinds, a job waiting
// on a rank that is gone ends at the transport's peer timeout, which stops the job).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace marian {

class SerialWorker {
public:
  // threadName: the thread's row on --timeline
  explicit SerialWorker(std::string threadName);
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Runs `job` after those posted before it; the ticket names it to wait.
  uint64_t post(std::function<void()> job);
  // Blocks until job `ticket` has run; rethrows its exception.
  void wait(uint64_t ticket);
  // Every job posted so far.
  void waitAll();

private:
  void run();

  std::string threadName_;
  std::mutex mutex_;
  std::condition_variable posted_, finished_;
  std::deque<std::pair<uint64_t, std::function<void()>>> jobs_;
  std::map<uint64_t, std::exception_ptr> failed_;
  uint64_t next_ = 0, done_ = 0;  // tickets posted; jobs run (they run in ticket order)
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is there
};

}  // namespace marian
