// `marian --ranks-in-process N` end to end: N ranks as threads of one process train as
// `mpirun -np N marian` does. Every rank's Costs at every display line and the validations agree
// with mpirun's on 2, 3 and 4 ranks, for dense sync-SGD and the README's
// COMPRESSED_OPTIONS and SLOW_LINK_OPTIONS (to float rounding: MPI_Allreduce may add the ranks'
// sums in another order than the in-process sum; the saved parameters are not compared, as Adam
// turns such rounding into steps of +-lr where a gradient is near 0). Misuse is a clear error.
#include <sys/wait.h>

#include <map>
#include <regex>

#include "e2e_helpers.h"

namespace {

using e2e::mpirun;
using e2e::RunResult;

// (rank, update) -> Cost, of every rank's display lines
std::map<std::pair<int, int>, double> costsOfEveryRank(const std::string& log) {
  std::map<std::pair<int, int>, double> out;
  std::regex line("\\] (\\[rank (\\d+)\\] )?Ep\\. \\d+ : Up\\. (\\d+) : Sen\\. [0-9,]+ : Cost ([0-9.]+)");
  for(std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
    int rank = (*it)[2].matched ? std::stoi((*it)[2]) : 0;
    out[{rank, std::stoi((*it)[3])}] = std::stod((*it)[4]);
  }
  return out;
}

void expectSameTraining(const std::string& name, const std::string& options, int ranks) {
  SCOPED_TRACE(name + " on " + std::to_string(ranks) + " ranks");
  std::string common = options + " --after-batches 20 --valid-freq 10 --cpu-threads 1" + e2e::validation();
  RunResult byMpirun = e2e::run(name + "-mpirun", common, true, mpirun(ranks));
  RunResult inProcess = e2e::run(name + "-in-process", common + " --ranks-in-process " + std::to_string(ranks));
  ASSERT_EQ(byMpirun.status, 0) << byMpirun.log;
  ASSERT_EQ(inProcess.status, 0) << inProcess.log;
  auto want = costsOfEveryRank(byMpirun.log), got = costsOfEveryRank(inProcess.log);
  ASSERT_EQ(want.size(), size_t(4 * ranks)) << byMpirun.log;  // a line every 5 updates on every rank
  ASSERT_EQ(got.size(), want.size()) << inProcess.log;
  for(const auto& [key, cost] : want) {
    ASSERT_TRUE(got.count(key)) << "no Cost of rank " << key.first << " at update " << key.second;
    EXPECT_NEAR(got[key], cost, 1e-5 * cost) << "rank " << key.first << ", update " << key.second;
  }
  std::vector<double> wantValid = e2e::validCE(byMpirun.log), gotValid = e2e::validCE(inProcess.log);
  ASSERT_EQ(wantValid.size(), 2u) << byMpirun.log;
  ASSERT_EQ(gotValid.size(), 2u) << inProcess.log;
  for(size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(gotValid[i], wantValid[i], 1e-4 * wantValid[i]);
}

TEST(RanksInProcess, TrainLikeMpirunOnTwoThreeAndFourRanks) {
  for(int ranks : {2, 3, 4})
    expectSameTraining("in-process-dense", "--sync-sgd", ranks);
}

TEST(RanksInProcess, CompressedAndSlowLinkOptionsTrainLikeMpirun) {
  std::string compressed = e2e::readmeOptions("COMPRESSED_OPTIONS"), slowLink = e2e::readmeOptions("SLOW_LINK_OPTIONS");
  ASSERT_FALSE(compressed.empty());
  ASSERT_FALSE(slowLink.empty());
  // 1-bit Adam after 10 dense updates, so that both phases run
  expectSameTraining("in-process-compressed", "--sync-sgd --clip-norm 0 " + compressed + " --adam-freeze-variance-after 10", 3);
  expectSameTraining("in-process-slow-link", "--clip-norm 0 " + slowLink + " --local-steps 5", 3);
}

// An error of rank 0 after training (its last validation cannot write its translations) ends the
// parameter server's ranks as threads with that error named, not an abort ("terminate called"):
// the server threads and the shutdown's barrier met the stopped network by throwing out of a thread
// and out of a destructor.
TEST(RanksInProcess, AnErrorEndsTheParameterServerNamingIt) {
  RunResult r = e2e::run("in-process-ps-error", "--multi-node --after-batches 4 --valid-freq 4 --valid-metrics "
                                                "translation --valid-translation-output /no/such/folder/out.txt" +
                                                    e2e::validation() + " --ranks-in-process 2");
  ASSERT_TRUE(WIFEXITED(r.status)) << r.log;
  EXPECT_EQ(WEXITSTATUS(r.status), 1) << r.log;
  EXPECT_NE(r.log.find("/no/such/folder/out.txt"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("terminate called"), std::string::npos) << r.log;
}

// Every device of every rank draws its own dropout masks (as Marian's generators per device and
// process): two ranks given the same sentences (a corpus of one block of 16 pairs twice, in file
// order) show the same Cost without dropout and different Costs with it.
TEST(RanksInProcess, EveryRankDrawsItsOwnDropoutMasks) {
  std::string d = e2e::corpusDir();
  ASSERT_EQ(std::system(("cd " + d + " && head -n 16 train.src > twice.src && head -n 16 train.src >> twice.src && "
                         "head -n 16 train.trg > twice.trg && head -n 16 train.trg >> twice.trg")
                            .c_str()),
            0);
  for(std::string dropout : {"0", "0.3"}) {
    SCOPED_TRACE("--transformer-dropout " + dropout);
    RunResult r = e2e::run("dropout-ranks", "--sync-sgd --ranks-in-process 2 --train-sets " + d + "/twice.src " + d +
                                                "/twice.trg --shuffle none --maxi-batch-sort none --after-batches 1 "
                                                "--disp-freq 1 --transformer-dropout " + dropout);
    ASSERT_EQ(r.status, 0) << r.log;
    auto costs = costsOfEveryRank(r.log);
    ASSERT_EQ(costs.size(), 2u) << r.log;
    double rank0 = costs[std::make_pair(0, 1)], rank1 = costs[std::make_pair(1, 1)];
    if(dropout == "0") {
      EXPECT_EQ(rank0, rank1) << r.log;
    } else {
      EXPECT_NE(rank0, rank1) << r.log;
    }
  }
}

TEST(RanksInProcess, MisuseIsAClearError) {
  RunResult underMpirun = e2e::run("in-process-mpirun", "--sync-sgd --after-batches 2 --ranks-in-process 2", true, mpirun(2));
  EXPECT_NE(underMpirun.status, 0);
  EXPECT_NE(underMpirun.log.find("start it without mpirun"), std::string::npos) << underMpirun.log;
  RunResult timeline = e2e::run("in-process-timeline", "--sync-sgd --after-batches 2 --ranks-in-process 2 --timeline "
                                                       + e2e::corpusDir() + "/trace.json");
  EXPECT_NE(timeline.status, 0);
  EXPECT_NE(timeline.log.find("--timeline traces one rank per process"), std::string::npos) << timeline.log;
}

}  // namespace
