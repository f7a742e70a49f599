// `mpirun marian --sync-sgd` end to end: synchronous SGD across ranks by allreduce. On 2 ranks
// every algorithm adds two numbers per entry, which is exact, so all must print the same costs;
// with top-k compression each trains and the bytes fall; wrong settings are clear errors. What
// the ranks agree on each update (their epochs, counts and schedule): test_lockstep_e2e.cpp.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "comm/allreduce/algorithms.h"
#include "e2e_helpers.h"
#include "timeline_spans.h"

namespace {

using e2e::costs;
using e2e::mpirun;
using e2e::readmeOptions;
using e2e::RunResult;
using e2e::sentBytesPerUpdate;
using e2e::validCE;


TEST(SyncAllreduce, TwoRanksEveryAlgorithmPrintsTheSameCosts) {
  RunResult reference = e2e::run("sync-dense", "--sync-sgd --after-batches 20", true, mpirun(2));
  ASSERT_EQ(reference.status, 0) << reference.log;
  ASSERT_EQ(costs(reference.log).size(), 4u) << reference.log;
  for(const marian::AllreduceEntry& entry : marian::allreduceAlgorithms()) {
    const std::string& algo = entry.name;
    SCOPED_TRACE(algo);
    RunResult r = e2e::run("sync-" + algo, "--sync-sgd --after-batches 20 --sparse-allreduce " + algo, true, mpirun(2));
    ASSERT_EQ(r.status, 0) << r.log;
    EXPECT_EQ(costs(r.log), costs(reference.log)) << r.log;
  }
}

// `opts` on `ranks` ranks with one allreduce after backward and in buckets of ~10 KB (this
// model's 33k parameters make more than a dozen): both must run and print the same number of
// Costs (4); the bucketed run's log for the caller's checks.
struct AfterAndBucketed {
  std::vector<std::pair<int, std::string>> after, bucketed;
  std::string log;
};
void runAfterAndBucketed(const std::string& name, const std::string& opts, int ranks, AfterAndBucketed& out) {
  RunResult after = e2e::run(name + "-0", opts + " --bucket-size 0", true, mpirun(ranks));
  RunResult bucketed = e2e::run(name + "-10k", opts + " --bucket-size 0.01", true, mpirun(ranks));
  ASSERT_EQ(after.status, 0) << after.log;
  ASSERT_EQ(bucketed.status, 0) << bucketed.log;
  out = {costs(after.log), costs(bucketed.log), bucketed.log};
  ASSERT_EQ(out.after.size(), 4u) << after.log;
  ASSERT_EQ(out.after.size(), out.bucketed.size()) << bucketed.log;
}

// Buckets reduced while backward goes on print the Costs of one allreduce after backward: on 2
// ranks exactly (two numbers add exactly, in any cut), also with 2 devices per rank; on 3 ranks
// to float rounding (MPI picks its reduction by message size); with a device of each rank left
// without a sentence too. Compressed, each bucket selects
// its own top-k and training learns.
TEST(SyncAllreduce, BucketsOverlappedWithBackwardGiveTheSameCosts) {
  for(auto [ranks, devices] : {std::pair<int, int>{2, 1}, {2, 2}, {3, 1}}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks x " + std::to_string(devices) + " devices");
    AfterAndBucketed r;
    runAfterAndBucketed("bucket", "--sync-sgd --after-batches 20 --cpu-threads " + std::to_string(devices), ranks, r);
    EXPECT_NE(r.log.find(" : Hidden "), std::string::npos) << r.log;
    for(size_t i = 0; i < r.after.size(); ++i)
      if(ranks == 2)
        EXPECT_EQ(r.after[i], r.bucketed[i]);
      else
        EXPECT_NEAR(std::stod(r.after[i].second), std::stod(r.bucketed[i].second), 1e-5 * std::stod(r.after[i].second));
  }
  {  // one sentence a batch: each rank's second device has none, and its zeros must be in place
     // before the communication thread adds the first device's buckets into its shard
    SCOPED_TRACE("2 ranks x 2 devices, one of them without a sentence");
    AfterAndBucketed r;
    runAfterAndBucketed("bucket-idle", "--sync-sgd --after-batches 20 --cpu-threads 2 --mini-batch 1", 2, r);
    EXPECT_EQ(r.after, r.bucketed);
  }
  RunResult compressed = e2e::run("bucket-oktopk",
                                  "--sync-sgd --after-batches 60 --valid-freq 20 --bucket-size 0.01 "
                                  "--compression-density 0.1 --sparse-allreduce oktopk" + e2e::validation(),
                                  true, mpirun(2));
  ASSERT_EQ(compressed.status, 0) << compressed.log;
  std::vector<double> ce = validCE(compressed.log);
  ASSERT_EQ(ce.size(), 3u) << compressed.log;
  EXPECT_LT(ce[2], ce[0]) << compressed.log;
}

// With tied target embeddings the output layer's backward (first) and the decoder's lookups
// (last) both add to the table: with buckets and dense sums the lookups' rows are summed apart
// after backward, so the table's bucket goes during backward. The Costs are those of one
// allreduce after backward to float rounding (the table's two parts add in another order), on 2,
// 3 and 4 ranks, with 2 devices per rank, with --normalize-gradient (the rows scaled as the
// buckets are), and on both paths: as rows when the ranks together look up fewer than
// about twice the table's rows (batches of 2 sentences), the table whole when they look up more
// (4 ranks of 16 sentences on a 127-word vocabulary). Compressed buckets keep the lookups in the gradient.
TEST(SyncAllreduce, TiedEmbeddingLookupsSummedApartGiveTheSameCosts) {
  struct Case {
    int ranks, devices;
    std::string options, path;  // path: the log's words for the first update's, or "" for either
  };
  for(const Case& c : {Case{2, 1, "--mini-batch 2", "as rows (an index a row)"}, Case{2, 2, "", ""},
                       Case{3, 1, "--normalize-gradient", ""},
                       Case{4, 1, "--normalize-gradient", "as a dense allreduce of the tables"}}) {
    SCOPED_TRACE(std::to_string(c.ranks) + " ranks x " + std::to_string(c.devices) + " devices " + c.options);
    AfterAndBucketed r;
    runAfterAndBucketed("apart", "--sync-sgd --tied-embeddings --after-batches 20 " + c.options + " --cpu-threads " +
                                     std::to_string(c.devices), c.ranks, r);
    EXPECT_NE(r.log.find("Embedding lookups of decoder_Wemb are summed apart after backward, " + c.path),
              std::string::npos) << r.log;
    for(size_t i = 0; i < r.after.size(); ++i)
      EXPECT_NEAR(std::stod(r.after[i].second), std::stod(r.bucketed[i].second), 1e-5 * std::stod(r.after[i].second));
  }
  RunResult compressed = e2e::run("apart-topka", "--sync-sgd --tied-embeddings --after-batches 10 --bucket-size 0.01 "
                                                 "--compression-density 0.1 --sparse-allreduce topka",
                                  true, mpirun(2));
  ASSERT_EQ(compressed.status, 0) << compressed.log;
  EXPECT_EQ(compressed.log.find("summed apart"), std::string::npos) << compressed.log;
}

// scripts/timeline-summary's table of a 2-rank run with `options` and --timeline; "" when the run
// or the summary failed (the run's log in `log`).
std::string timelineTableOf(const std::string& name, const std::string& options, std::string& log) {
  std::string m = e2e::corpusDir() + "/" + name;
  RunResult r = e2e::run(name, options + " --timeline " + m + "/trace.json", true, mpirun(2));
  log = r.log;
  std::string cmd = "/usr/bin/python3 " MARIAN_SOURCE_DIR "/scripts/timeline-summary " + m + "/trace.json " + m +
                    "/trace.rank1.json > " + m + "/summary.txt";
  if(r.status != 0 || std::system(cmd.c_str()) != 0)
    return "";
  return e2e::readFile(m + "/summary.txt");
}

// Where and when the buckets' allreduce runs, on both ranks, whatever the scheduler did (how much
// of it hid behind backward, in the table printed, depends on it: on 2 busy cores the allreduce
// thread can be starved until backward ends): with buckets on the allreduce thread, which does
// not compute, every update's buckets all after its backward began and before its update, each
// handed over ("bucket ready") inside backward and reduced after it; without
// them one allreduce an update on the compute thread, after its backward. The model is wider
// than the tiny one, so that backward lasts long enough for buckets to be hidden behind it.
TEST(SyncAllreduce, TimelineShowsBucketsReducedBesideBackward) {
  for(std::string size : {"0.01", "0"}) {
    SCOPED_TRACE("--bucket-size " + size);
    std::string m = e2e::corpusDir() + "/bucket-timeline";
    std::string log, table = timelineTableOf("bucket-timeline", "--dim-emb 128 --transformer-dim-ffn 512 --sync-sgd "
                                                                   "--after-batches 20 --bucket-size " + size,
                                             log);
    ASSERT_FALSE(table.empty()) << log;
    std::printf("%s", table.c_str());
    for(std::string trace : {m + "/trace.json", m + "/trace.rank1.json"}) {
      SCOPED_TRACE(trace);
      std::vector<e2e::Span> spans = e2e::timelineSpans(trace);
      std::vector<e2e::Span> backward = e2e::spansNamed(spans, "backward"), update = e2e::spansNamed(spans, "update"),
                             buckets = e2e::spansNamed(spans, "allreduce bucket"),
                             whole = e2e::spansNamed(spans, "allreduce");
      ASSERT_EQ(backward.size(), 20u);
      ASSERT_EQ(update.size(), 20u);
      std::set<std::string> compute = e2e::threadsOf(backward);
      if(size == "0") {
        EXPECT_TRUE(buckets.empty());
        ASSERT_EQ(whole.size(), 20u);
        for(size_t u = 0; u < whole.size(); ++u) {
          EXPECT_EQ(compute.count(whole[u].thread), 1u) << whole[u].thread;
          EXPECT_GE(whole[u].start, backward[u].end) << "update " << u + 1;
          EXPECT_LE(whole[u].end, update[u].start) << "update " << u + 1;
        }
        continue;
      }
      EXPECT_TRUE(whole.empty());
      ASSERT_EQ(e2e::threadsOf(buckets), std::set<std::string>{"allreduce"});
      EXPECT_EQ(compute.count("allreduce"), 0u);
      ASSERT_GE(buckets.size(), 20u * 2);  // several buckets an update
      ASSERT_EQ(buckets.size() % 20, 0u) << buckets.size() << " buckets in 20 updates";
      std::vector<e2e::Mark> ready;
      for(const e2e::Mark& mark : e2e::timelineMarks(trace))
        if(mark.name == "bucket ready")
          ready.push_back(mark);
      size_t perUpdate = buckets.size() / 20;
      ASSERT_EQ(ready.size(), buckets.size());
      for(size_t u = 0; u < 20; ++u) {
        SCOPED_TRACE("update " + std::to_string(u + 1));
        size_t within = 0;
        for(const e2e::Span& b : buckets)
          within += b.start >= backward[u].start && b.end <= update[u].start;
        EXPECT_EQ(within, perUpdate);
        // handed over inside backward, and the i-th reduction not begun before i + 1 buckets were ready
        for(size_t i = 0; i < perUpdate; ++i) {
          const e2e::Mark& mark = ready[u * perUpdate + i];
          EXPECT_GE(mark.at, backward[u].start) << "bucket " << mark.text;
          EXPECT_LE(mark.at, backward[u].end) << "bucket " << mark.text;
          EXPECT_GE(buckets[u * perUpdate + i].start, mark.at) << "bucket " << mark.text;
        }
      }
    }
  }
}

// Streamed local steps: the outer exchanges run on their own thread, which does not compute, and
// each one's result is applied (its outer step) only after it ended. How much they overlapped the
// updates (the table printed) depends on the scheduler.
TEST(SyncAllreduce, TimelineShowsStreamedOuterExchangesBesideTheUpdates) {
  std::string m = e2e::corpusDir() + "/outer-timeline";
  std::string log, table = timelineTableOf("outer-timeline", "--dim-emb 128 --transformer-dim-ffn 512 --sync-sgd "
                                                                "--after-batches 20 --local-steps 4 --outer-fragments 2 "
                                                                "--outer-delay 1",
                                           log);
  ASSERT_FALSE(table.empty()) << log;
  std::printf("%s", table.c_str());
  for(std::string trace : {m + "/trace.json", m + "/trace.rank1.json"}) {
    SCOPED_TRACE(trace);
    std::vector<e2e::Span> spans = e2e::timelineSpans(trace);
    std::vector<e2e::Span> exchanges = e2e::spansNamed(spans, "outer exchange"),
                           steps = e2e::spansNamed(spans, "outer step");
    // fragments 0 and 1 sent after updates 2, 6, ... 18 and 4, 8, ... 20; the last may finish
    // after the trace is written
    EXPECT_TRUE(exchanges.size() == 9 || exchanges.size() == 10) << exchanges.size();
    ASSERT_EQ(e2e::threadsOf(exchanges).size(), 1u);
    std::string own = exchanges.front().thread;
    EXPECT_EQ(e2e::threadsOf(e2e::spansNamed(spans, "backward")).count(own), 0u) << own;
    EXPECT_EQ(e2e::threadsOf(steps).count(own), 0u) << own;
    ASSERT_GE(steps.size(), 9u);
    for(size_t k = 0; k < std::min(exchanges.size(), steps.size()); ++k)
      EXPECT_GE(steps[k].start, exchanges[k].end) << "outer exchange " << k + 1;
  }
}

// --optimizer-delay 2 with batches of 16 sums the gradients of the same 32 sentences per update
// as batches of 32 without delay (without shuffling or sorting, two consecutive batches of 16
// are one of 32; on 2 ranks the update's four batches of 16 are the two of 32), so SGD
// reaches the same parameters up to float rounding; also with --normalize-gradient (the scale
// counts the labels of every batch of the update on every rank, as Marian's: the ranks' batches of
// 16 pair up otherwise than their batches of 32, so each rank dividing by its own labels, as an
// earlier version did, would weigh the labels otherwise), whatever --cost-type shows.
TEST(OptimizerDelay, TwoBatchesPerUpdateEqualOneBatchOfTwiceTheSize) {
  std::string common = "--sync-sgd --optimizer sgd --learn-rate 0.1 --shuffle none --maxi-batch-sort none "
                       "--after-batches 10 ";
  for(int ranks : {1, 2})
    for(std::string gradient : {"--cost-type ce-sum", "--normalize-gradient --cost-type ce-mean"}) {
      SCOPED_TRACE(std::to_string(ranks) + " rank(s), " + gradient);
      std::string opts = common + gradient;
      // --maxi-batch counts mini-batches: twice as many of half the size read the same 320 sentences
      // ahead, so the batches agree in either order of an epoch (--shuffle-within-maxi-batch)
      RunResult whole = e2e::run("delay-whole", opts + " --mini-batch 32 --maxi-batch 10", true, mpirun(ranks));
      RunResult delayed = e2e::run("delay-2", opts + " --mini-batch 16 --maxi-batch 20 --optimizer-delay 2", true,
                                   mpirun(ranks));
      ASSERT_EQ(whole.status, 0) << whole.log;
      ASSERT_EQ(delayed.status, 0) << delayed.log;
      ASSERT_EQ(costs(delayed.log).size(), 2u) << delayed.log;  // 10 updates, not 20
      // where Marian's synchronous training would split one batch instead, the log says so
      EXPECT_NE(delayed.log.find("--optimizer-delay 2 without --mini-batch-fit: an update here sums 2 batches"),
                std::string::npos) << delayed.log;
      EXPECT_EQ(whole.log.find("without --mini-batch-fit"), std::string::npos) << whole.log;
      // the sentences of every rank, as Marian's synchronous training counts them
      EXPECT_NE(delayed.log.find("Up. 10 : Sen. " + std::to_string(320 * ranks) + " "), std::string::npos) << delayed.log;
      std::string folder = e2e::corpusDir() + "/";
      double difference =
          e2e::largestParameterDifference(folder + "delay-whole/model.npz", folder + "delay-2/model.npz");
      EXPECT_GE(difference, 0.0) << "the models could not be compared";
      EXPECT_LT(difference, 1e-5);
    }
}

// As Marian's, `mpirun -np N marian` with one device a rank trains synchronously without
// --sync-sgd (the same Costs); with more devices a rank it names the two ways to train.
TEST(SyncAllreduce, RanksOfOneDeviceTrainSynchronouslyWithoutTheOption) {
  RunResult with = e2e::run("mpi-sync", "--sync-sgd --after-batches 10", true, mpirun(2));
  RunResult without = e2e::run("mpi-no-sync", "--after-batches 10", true, mpirun(2));
  ASSERT_EQ(with.status, 0) << with.log;
  ASSERT_EQ(without.status, 0) << without.log;
  EXPECT_NE(without.log.find("2 MPI ranks of one device each train synchronously, as Marian's"), std::string::npos)
      << without.log;
  ASSERT_EQ(costs(with.log).size(), 2u) << with.log;
  EXPECT_EQ(costs(without.log), costs(with.log));
  RunResult two = e2e::run("mpi-two-devices", "--after-batches 2 --cpu-threads 2", true, mpirun(2));
  EXPECT_NE(two.status, 0);
  EXPECT_NE(two.log.find("Started on 2 MPI ranks of 2 devices each: train with --sync-sgd"), std::string::npos)
      << two.log;
}

// Every graph group takes --optimizer-delay: async over 2 devices and the parameter server on 2
// ranks train with it; a fraction of a batch is refused.
TEST(OptimizerDelay, EveryGraphGroupTrainsWithItAndFractionsAreRefused) {
  std::string opts = "--after-batches 40 --valid-freq 20 --optimizer-delay 2" + e2e::validation();
  for(auto [name, extra, launcher] : {std::tuple<std::string, std::string, std::string>{"async", " --cpu-threads 2", ""},
                                      {"ps", " --multi-node", mpirun(2)}}) {
    SCOPED_TRACE(name);
    RunResult r = e2e::run("delay-" + name, opts + extra, true, launcher);
    ASSERT_EQ(r.status, 0) << r.log;
    std::vector<double> ce = validCE(r.log);
    ASSERT_EQ(ce.size(), 2u) << r.log;
    EXPECT_LT(ce[1], ce[0]) << r.log;
  }
  RunResult fraction = e2e::run("delay-fraction", "--after-batches 1 --optimizer-delay 1.5");
  EXPECT_NE(fraction.status, 0);
  EXPECT_NE(fraction.log.find("--optimizer-delay must be a whole number of mini-batches >= 1, not 1.5"),
            std::string::npos) << fraction.log;
}

TEST(SyncAllreduce, CompressedTrainingLearnsOnTwoAndThreeRanks) {
  // density 0.1 of this 33k-parameter model: ~3,300 values per rank and update
  for(int ranks : {2, 3})
    for(std::string algo : {"topka", "dsar-split", "gtopk", "oktopk"}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks " + algo);
      RunResult r = e2e::run("sync-c-" + algo,
                             "--sync-sgd --after-batches 60 --valid-freq 20 --compression-density 0.1 "
                             "--sparse-allreduce " + algo + e2e::validation(),
                             true, mpirun(ranks));
      ASSERT_EQ(r.status, 0) << r.log;
      std::vector<double> ce = validCE(r.log);
      ASSERT_GE(ce.size(), 3u) << r.log;
      EXPECT_LT(ce.back(), ce.front()) << r.log;
    }
}

// `options` on 2 ranks stop with an error whose text holds `message`.
void expectRefused(const std::string& name, const std::string& options, const std::string& message) {
  RunResult r = e2e::run(name, options, true, mpirun(2));
  EXPECT_NE(r.status, 0) << options;
  EXPECT_NE(r.log.find(message), std::string::npos) << r.log;
}

// A compressed scheme (`scheme`: its options) learns on 2 and 3 ranks, and on 2 the last display
// line's bytes per update are at least `fewer` times fewer than the dense ring's.
void expectLearnsWithFewerBytes(const std::string& name, const std::string& scheme, double fewer) {
  RunResult dense = e2e::run(name + "-dense", "--sync-sgd --after-batches 60 --sparse-allreduce ring", true, mpirun(2));
  ASSERT_EQ(dense.status, 0) << dense.log;
  for(int ranks : {2, 3}) {
    SCOPED_TRACE(name + " on " + std::to_string(ranks) + " ranks");
    RunResult r = e2e::run(name, "--sync-sgd --after-batches 60 --valid-freq 20 --sparse-allreduce ring " + scheme +
                           e2e::validation(), true, mpirun(ranks));
    ASSERT_EQ(r.status, 0) << r.log;
    std::vector<double> ce = validCE(r.log);
    ASSERT_GE(ce.size(), 3u) << r.log;
    EXPECT_LT(ce.back(), ce.front()) << r.log;
    if(ranks == 2) {
      std::vector<double> d = e2e::sentBytesPerUpdateByLine(dense.log), s = e2e::sentBytesPerUpdateByLine(r.log);
      ASSERT_FALSE(s.empty()) << r.log;
      EXPECT_GE(d.back() / s.back(), fewer) << "ring " << d.back() << " B/update, " << name << " " << s.back();
    }
  }
}

// PowerSGD at rank 2 from the first update
TEST(SyncAllreduce, PowerSgdLearnsAndCutsTheBytesPerUpdate) {
  expectLearnsWithFewerBytes("sync-psgd", "--powersgd-rank 2 --powersgd-start 0", 4.0);
}

// 1-bit Adam: dense Adam for 5 updates, then the momentum in 1 bit a value (about a 32nd of the
// dense ring's bytes), also in units of the frozen sqrt(v) (--onebit-update-direction: Adam's v
// read where the shards keep it); without the freeze, or the units without 1-bit Adam or with
// blocks, it is refused.
TEST(SyncAllreduce, OneBitAdamLearnsAndCutsTheBytesPerUpdate) {
  expectLearnsWithFewerBytes("sync-1bit", "--onebit-adam --adam-freeze-variance-after 5", 16.0);
  expectLearnsWithFewerBytes("sync-1bit-ud", "--onebit-adam --adam-freeze-variance-after 5 --onebit-update-direction",
                             16.0);
  expectRefused("sync-1bit-refused", "--sync-sgd --after-batches 2 --onebit-adam",
                "--onebit-adam needs --adam-freeze-variance-after");
  expectRefused("sync-1bit-ud-alone", "--sync-sgd --after-batches 2 --onebit-update-direction",
                "--onebit-update-direction is a setting of --onebit-adam");
  expectRefused("sync-1bit-ud-blocks",
                "--sync-sgd --after-batches 2 --onebit-adam --adam-freeze-variance-after 5 --onebit-update-direction "
                "--onebit-block-size 64",
                "not with --onebit-block-size");
  expectRefused("sync-1bit-scale-alone", "--sync-sgd --after-batches 2 --onebit-scale mean-abs",
                "--onebit-scale is a setting of --onebit-adam");
  expectRefused("sync-1bit-scale-unknown",
                "--sync-sgd --after-batches 2 --onebit-adam --adam-freeze-variance-after 5 --onebit-scale l3",
                "--onebit-scale must be rms or mean-abs, not 'l3'");
}

// 0/1 Adam: the variance's steps dense (kappa 2: 1, 2, 4, 6, 10, 14, 22), the gradient in 1 bit
// between them, and from update 30 the momentum in 1 bit; without kappa it is refused.
TEST(SyncAllreduce, ZeroOneAdamLearnsAndCutsTheBytesPerUpdate) {
  expectLearnsWithFewerBytes("sync-01",
                             "--zero-one-adam --adam-freeze-variance-after 30 --adam-variance-update-scaler 2", 16.0);
  expectRefused("sync-01-refused", "--sync-sgd --after-batches 2 --zero-one-adam --adam-freeze-variance-after 5",
                "--zero-one-adam needs --adam-variance-update-scaler");
}

// A README line NAME="..." as a user copies it, on 2 ranks beside dense sync-SGD (both with
// --clip-norm 0, as in examples/multi30k/train.yml, where the README measured the lines: with
// clipping, 1-bit Adam's ranks clip their own gradients, dense the sum: another training), each
// validated every 16 updates of 160: the line learns, its last validation at or below dense's
// after `denseUpdates`, and its last display line sends at least `fewerBytes` times fewer bytes
// per update. Measured in updates, not as a ratio of cross-entropies: around update 160 both fall
// by 10-20% every 10 updates, so a lag of a few updates is a few percent of cross-entropy.
void expectReadmeLineLearnsLikeDenseWithFewerBytes(const std::string& name, size_t denseUpdates, double fewerBytes) {
  std::string options = readmeOptions(name);
  ASSERT_FALSE(options.empty()) << "README.md has no line " << name << "=\"...\"";
  std::string common = "--after-batches 160 --valid-freq 16 --disp-freq 20 --clip-norm 0" + e2e::validation();
  RunResult dense = e2e::run("readme-dense-" + name, common + " --sync-sgd --sparse-allreduce ring", true, mpirun(2));
  RunResult line = e2e::run("readme-" + name, common + " --sync-sgd " + options, true, mpirun(2));
  ASSERT_EQ(dense.status, 0) << dense.log;
  ASSERT_EQ(line.status, 0) << line.log;
  std::vector<double> d = validCE(dense.log), c = validCE(line.log);
  ASSERT_EQ(d.size(), 10u) << dense.log;
  ASSERT_EQ(c.size(), 10u) << line.log;
  EXPECT_LT(c.back(), c.front()) << line.log;
  EXPECT_LE(c.back(), d[denseUpdates / 16 - 1])
      << options << ": " << c.back() << " after 160 updates, dense " << d[denseUpdates / 16 - 1] << " after " << denseUpdates;
  std::vector<double> db = e2e::sentBytesPerUpdateByLine(dense.log), cb = e2e::sentBytesPerUpdateByLine(line.log);
  ASSERT_FALSE(cb.empty()) << line.log;
  EXPECT_GE(db.back() / cb.back(), fewerBytes) << "dense " << db.back() << " B/update, " << options << " " << cb.back();
}

// The recommended compressed training (1-bit Adam) at most a tenth of the updates behind dense
// (measured lag: 4-9 updates, seeds 7-12, either order of the batches), 16x fewer bytes.
TEST(SyncAllreduce, ReadmeCompressedOptionsLearnLikeDenseWithFewerBytes) {
  expectReadmeLineLearnsLikeDenseWithFewerBytes("COMPRESSED_OPTIONS", 144, 16.0);
}

// The line for slow links (local steps with 4-bit pseudo-gradients) at most 32 updates behind
// (measured lag: 10-20 updates, seeds 7-12; on Multi30k 1.04x dense's words), and over the last 20
// updates (two rounds of 10) at least 50x fewer bytes (about 78x: 4 bits and a scale per 256
// values against 32 bits, once a round).
TEST(SyncAllreduce, ReadmeSlowLinkOptionsLearnLikeDenseWithFewerBytes) {
  expectReadmeLineLearnsLikeDenseWithFewerBytes("SLOW_LINK_OPTIONS", 128, 50.0);
}

TEST(SyncAllreduce, CompressionCutsTheBytesPerUpdate) {
  RunResult dense = e2e::run("sync-bytes-dense", "--sync-sgd --after-batches 30 --sparse-allreduce ring", true, mpirun(2));
  RunResult sparse = e2e::run("sync-bytes-oktopk",
                              "--sync-sgd --after-batches 30 --sparse-allreduce oktopk --compression-density 0.01",
                              true, mpirun(2));
  ASSERT_EQ(dense.status, 0) << dense.log;
  ASSERT_EQ(sparse.status, 0) << sparse.log;
  double d = sentBytesPerUpdate(dense.log), s = sentBytesPerUpdate(sparse.log);
  ASSERT_GT(s, 0);
  // ring on 2 ranks sends n values; oktopk at most 6k (P-1)/P values (plus its periodic
  // threshold estimate): about 1/30 of that here
  EXPECT_GE(d / s, 20.0) << "ring " << d << " B/update, oktopk " << s;
}

// The display line's bytes are the updates' own: the same with checkpoints saved between the
// lines (their gathers go over the same channel) as without; 1-bit Adam's exchange is counted
// with MPI's dense allreduce as the bucket's algorithm too (it runs its own), and a line whose
// updates went partly through MPI_Allreduce says how many.
TEST(SyncAllreduce, TheDisplayedBytesAreTheUpdatesOwn) {
  std::string topk = "--sync-sgd --after-batches 20 --sparse-allreduce topka --compression-density 0.05 ";
  RunResult plain = e2e::run("bytes-plain", topk, true, mpirun(2));
  RunResult saving = e2e::run("bytes-saving", topk + "--save-freq 5", true, mpirun(2));
  ASSERT_EQ(plain.status, 0) << plain.log;
  ASSERT_EQ(saving.status, 0) << saving.log;
  auto traffic = [](const std::string& log) {  // every rank's lines: a gather's sender and receiver
    std::vector<std::string> out;
    std::regex line("(\\[rank \\d+\\] )?Ep\\. \\d+ : Up\\. (\\d+) : .*(Sent [^:]*/up : Recv [^:]*/up)");
    std::smatch m;
    std::istringstream lines(log);
    for(std::string l; std::getline(lines, l);)
      if(std::regex_search(l, m, line))
        out.push_back(m[1].str() + m[2].str() + " " + m[3].str());
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_EQ(traffic(plain.log).size(), 8u) << plain.log;
  EXPECT_EQ(traffic(saving.log), traffic(plain.log)) << saving.log;

  std::string onebit = "--sync-sgd --after-batches 20 --onebit-adam --adam-freeze-variance-after 3 ";
  RunResult ring = e2e::run("bytes-ring", onebit + "--sparse-allreduce ring", true, mpirun(2));
  RunResult mpi = e2e::run("bytes-mpi", onebit + "--sparse-allreduce dense", true, mpirun(2));
  ASSERT_EQ(ring.status, 0) << ring.log;
  ASSERT_EQ(mpi.status, 0) << mpi.log;
  std::vector<double> r = e2e::sentBytesPerUpdateByLine(ring.log), m = e2e::sentBytesPerUpdateByLine(mpi.log);
  ASSERT_EQ(r.size(), 4u) << ring.log;
  ASSERT_EQ(m.size(), 4u) << mpi.log;  // the first line too: 2 of its 5 updates in 1 bit
  EXPECT_NE(mpi.log.find("(MPI_Allreduce's not counted in 3 of 5 updates)"), std::string::npos) << mpi.log;
  for(size_t k = 1; k < 4; ++k)  // every update in 1 bit: the same bytes whatever the bucket's algorithm
    EXPECT_EQ(m[k], r[k]) << "line " << k << "\n" << mpi.log;
}

TEST(SyncAllreduce, WrongSettingsAreClearErrors) {
  // (mpirun without --sync-sgd trains synchronously: RanksOfOneDeviceTrainSynchronouslyWithoutTheOption)
  expectRefused("sync-err2", "--sync-sgd --sparse-allreduce fastest", "--sparse-allreduce 'fastest' is unknown");
  expectRefused("sync-err3", "--sync-sgd --compression-density 1.5", "--compression-density");
  expectRefused("sync-err4", "--sync-sgd --compression-density 0.1 --powersgd-rank 4", "two compressions");
  expectRefused("sync-err5", "--multi-node --onebit-adam --adam-freeze-variance-after 5",
                "the parameter server (--multi-node) drops gradients");
  expectRefused("sync-err6", "--sync-sgd --optimizer sgd --adam-freeze-variance-after 5",
                "--adam-freeze-variance-after needs --optimizer adam");
}

}  // namespace
