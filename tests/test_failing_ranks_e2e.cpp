// Failing ranks under real mpirun -np 2 (issue 19): a rank stopped (SIGSTOP) or killed (kill -9)
// at an update, while rank 0 saves, at the end of training or during start-up ends the whole job
// through --multi-node-timeout (or mpirun's notice of a dead rank) instead of hanging, in the
// parameter server, sync dense and sync compressed modes; the failing rank and the cause are
// printed, no process is left, and the last checkpoint resumes. A rank that is only busy (alive)
// is waited for. The faults come from MARIAN_FAULT (common/fault_point.h), so each hits its
// moment exactly.
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "e2e_helpers.h"

namespace {

using e2e::RunResult;

constexpr int kTimeout = 5;
// A job that hangs runs until e2e::mpirun's `timeout 300`. This bound only tells such a hang from
// the timeout path (mpirun's start, training up to the fault, kTimeout, the abort: about 15 s,
// longer on a loaded machine); it is not a speed check.
constexpr double kHangSeconds = 150;

struct Mode {
  std::string name, options;
};
const std::vector<Mode> kModes = {{"ps", "--multi-node"},
                                  {"sync-dense", "--sync-sgd"},
                                  {"sync-topka", "--sync-sgd --sparse-allreduce topka --compression-density 0.1"}};

const std::string kRun = " --after-batches 30 --save-freq 10 --multi-node-timeout " + std::to_string(kTimeout) + " ";

// Whether a process of the job outlives it by more than 5 s (a rank that mpirun's SIGTERM
// reached may still be exiting when mpirun returns, more so on a loaded machine); those left are
// printed. "[m]arian": the pattern must not match the shell that runs pgrep.
bool processesLeft(const std::string& folder) {
  std::string pattern = "'[m]arian --train-sets.*" + folder + "/model.npz'";
  for(int tenths = 0; tenths < 50; ++tenths) {
    if(std::system(("pgrep -f " + pattern + " > /dev/null").c_str()) != 0)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::system(("pgrep -af " + pattern).c_str());
  return true;
}

// Runs the mode with the fault; checks the job ended in time, naming the rank and the cause.
void expectJobEnds(const Mode& m, const std::string& fault, const std::string& expected) {
  SCOPED_TRACE(m.name + " " + fault);
  std::string folder = m.name + "-" + fault.substr(0, fault.find('@')) + "-" + fault.substr(fault.find('@') + 1);
  for(char& c : folder)
    if(c == ':')
      c = '-';
  auto start = std::chrono::steady_clock::now();
  RunResult r = e2e::run(folder, m.options + kRun, true, "MARIAN_FAULT=" + fault + " " + e2e::mpirun(2));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.status, 0) << r.log;
  EXPECT_FALSE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 124) << "ended by the outer timeout\n" << r.log;
  EXPECT_LT(seconds, kHangSeconds) << r.log;
  EXPECT_NE(r.log.find(expected), std::string::npos) << r.log;
  if(expected.find("has been silent for") != std::string::npos) {  // the timeout path named the cause
    EXPECT_TRUE(std::regex_search(r.log, std::regex(expected + " \\d+ s .*\\(--multi-node-timeout " +
                                                    std::to_string(kTimeout) + "\\); stopping the job")))
        << r.log;
  }
  std::string path = e2e::corpusDir() + "/" + folder;
  EXPECT_FALSE(processesLeft(path));
  std::system(("pkill -9 -f '[m]arian --train-sets.*" + path + "/model.npz' 2>/dev/null").c_str());
}

// The checkpoint the failed job left resumes to the end.
void expectResumes(const Mode& m, const std::string& fault, const std::string& resumedFrom) {
  std::string folder = m.name + "-" + fault.substr(0, fault.find('@')) + "-" + fault.substr(fault.find('@') + 1);
  for(char& c : folder)
    if(c == ':')
      c = '-';
  RunResult r = e2e::run(folder, m.options + kRun, false, e2e::mpirun(2));
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("Resuming from"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find(resumedFrom), std::string::npos) << r.log;
}

const std::string kSilent1 = "rank 1 has been silent for";
const std::string kSilent0 = "rank 0 has been silent for";
const std::string kKilled1 = "process rank 1 with PID";
const std::string kKilled0 = "process rank 0 with PID";

TEST(FailingRanks, StoppedOrKilledDuringTraining) {
  for(const Mode& m : kModes) {
    expectJobEnds(m, "STOP@update-15:1", kSilent1);
    expectJobEnds(m, "KILL@update-15:1", kKilled1);
  }
  // the checkpoint of update 10 stays whole and resumes, with the parameter server (whose shards
  // rank 1 holds too) and with the allreduce. The parameter server's ranks go at their own pace:
  // on a busy machine rank 1 can reach its update 15 before rank 0 saved its 10th (the job then
  // ends with nothing saved), so there rank 0 stops, after its save
  expectJobEnds(kModes[0], "STOP@update-15:0", kSilent0);
  expectResumes(kModes[0], "STOP@update-15:0", "update 10");
  expectResumes(kModes[1], "STOP@update-15:1", "update 10");
}

TEST(FailingRanks, StoppedOrKilledWhileRankZeroSaves) {
  for(const Mode& m : kModes) {
    expectJobEnds(m, "STOP@save-20:0", kSilent0);
    expectJobEnds(m, "KILL@save-20:0", kKilled0);
    // model.npz of update 20 was written, its checkpoint not: the one of update 10 resumes
    expectResumes(m, "KILL@save-20:0", "update 10");
  }
}

TEST(FailingRanks, StoppedAtTheEndOfTraining) {
  for(const Mode& m : kModes) {
    expectJobEnds(m, "STOP@end:1", kSilent1);
    expectJobEnds(m, "STOP@end:0", kSilent0);
  }
}

TEST(FailingRanks, AnErrorOnOneRankIsPrintedAndEndsTheJob) {
  // a failing save on rank 0, an error in rank 1's server thread: printed, the job ends at once
  // (the other rank trained on, and the parameter server's shutdown waited 10 timeouts)
  for(const Mode& m : kModes)
    expectJobEnds(m, "THROW@save-20:0", "Error: injected fault at save-20");
  expectJobEnds(kModes[0], "THROW@server:1", "rank 1: the parameter server thread failed: injected fault at server");
}

TEST(FailingRanks, ABusyRankIsWaitedFor) {
  // rank 0 busy for 2 timeouts at the end (a slow final validation): alive, so the job finishes.
  // The timeout is the other tests' 5 s, not 1 or 2: it also bounds MPI start-up, which a niced
  // test beside a 2-thread job stretched past 2 s.
  const std::string busy = "BUSY" + std::to_string(2 * kTimeout) + "@end:0 ";
  for(const Mode& m : {kModes[0], kModes[1]}) {
    SCOPED_TRACE(m.name);
    RunResult r = e2e::run("busy-" + m.name, m.options + kRun, true, "MARIAN_FAULT=" + busy + e2e::mpirun(2));
    EXPECT_EQ(r.status, 0) << r.log;
    EXPECT_NE(r.log.find("rank 1: waiting"), std::string::npos) << r.log;  // the wait is reported
    EXPECT_NE(r.log.find("Training finished"), std::string::npos) << r.log;
  }
}

TEST(FailingRanks, StoppedDuringStartUp) {
  expectJobEnds(kModes[0], "STOP@start:1", "MPI start-up did not finish within 5 s");
}

}  // namespace
