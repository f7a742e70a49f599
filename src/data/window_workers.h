#pragma once
// defines: marian::WindowWorkers — the threads that prepare a streamed corpus' next window (the
// producer and its encoding threads) and their priority: SCHED_IDLE while training has batches in
// hand (where cores are few, the next window is then prepared in training's idle time instead of
// slowing its updates), the normal priority while training waits for the window (any other
// process on the machine, a compiler beside, would otherwise starve them and training with them;
// where the process may not leave SCHED_IDLE again, an unprivileged one without RLIMIT_NICE,
// always the normal priority); and a flag that abandons a window in preparation at its next chunk (training ended or failed).
#include <atomic>
#include <mutex>
#include <vector>

#include <sys/types.h>

#include "data/corpus.h"

namespace marian {

class WindowWorkers {
public:
  // For Corpus: each encoding thread joins (at the priority of the moment) and leaves; a window
  // in preparation stops at its next chunk once cancelled.
  EncodingControl control();
  // Training waits for the window (urgent) or has batches in hand.
  void setUrgent(bool urgent);
  void cancel() { cancelled_ = true; }
  // Whether this process may go back from SCHED_IDLE to the normal policy (root, or an
  // RLIMIT_NICE that allows nice 0); where it may not, the workers never go idle.
  static bool mayLeaveIdle();
  void resume() { cancelled_ = false; }

  // The calling thread (the producer) joins and leaves itself.
  void join();
  void leave();

private:
  void apply(pid_t tid) const;  // under mutex_
  std::mutex mutex_;
  std::vector<pid_t> threads_;
  bool urgent_ = false;
  std::atomic<bool> cancelled_{false};
};

}  // namespace marian
