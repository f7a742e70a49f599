// End-to-end runs of the `marian` program on a small synthetic corpus: sync-SGD over 2 devices
// matches 1 device, async and s2s train, and divergence is a clear error that keeps the last
// checkpoint (resuming: test_resume_e2e.cpp).
#include "e2e_helpers.h"

namespace {

using e2e::costs;
using e2e::RunResult;
using e2e::validCE;

std::string dir() { return e2e::corpusDir(); }
RunResult marian(const std::string& model, const std::string& extra, bool fresh = true) {
  return e2e::run(model, extra, fresh);
}

TEST(TrainEndToEnd, SyncOverTwoDevicesMatchesOneDevice) {
  RunResult one = marian("one", "--after-batches 15 --cpu-threads 1");
  RunResult two = marian("two", "--after-batches 15 --cpu-threads 2 --sync-sgd");
  ASSERT_EQ(one.status, 0) << one.log;
  ASSERT_EQ(two.status, 0) << two.log;
  auto a = costs(one.log), b = costs(two.log);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(a.size(), b.size());
  for(size_t i = 0; i < a.size(); ++i)  // same gradients, summed in another order
    EXPECT_NEAR(std::stod(a[i].second), std::stod(b[i].second), 1e-3 * std::stod(a[i].second));
}

// Whether a GPU can run here (a GPU backend and a visible GPU). A probe that fails for another
// reason is a defect of the GPU path: the GPU tests fail on it instead of skipping.
bool gpuAvailable() {
  static bool available = [] {
    RunResult probe = marian("gpu-probe", "--after-batches 1 --cpu-threads 0 --devices 0");
    EXPECT_TRUE(probe.status == 0 || e2e::noGpuHere(probe.log)) << "training on GPU 0 failed:\n" << probe.log;
    return probe.status == 0 || !e2e::noGpuHere(probe.log);
  }();
  return available;
}

// The same batches, seed and dropout masks on GPU 0 and on the CPU: the Costs agree to float
// rounding (transformer and s2s), and a stopped and resumed GPU run prints the uninterrupted
// one's Costs. Skipped without a GPU.
TEST(TrainEndToEnd, GpuTracksCpuAndResumes) {
  if(!gpuAvailable())
    GTEST_SKIP() << "no GPU: marian --cpu-threads 0 --devices 0 cannot train here";
  for(std::string model : {"--type transformer --transformer-dropout 0.1", "--type s2s --dim-rnn 32"}) {
    SCOPED_TRACE(model);
    RunResult cpu = marian("track-cpu", model + " --after-batches 30");
    RunResult gpu = marian("track-gpu", model + " --after-batches 30 --cpu-threads 0 --devices 0");
    ASSERT_EQ(cpu.status, 0) << cpu.log;
    ASSERT_EQ(gpu.status, 0) << gpu.log;
    auto a = costs(cpu.log), b = costs(gpu.log);
    ASSERT_EQ(a.size(), 6u) << cpu.log;
    ASSERT_EQ(a.size(), b.size()) << gpu.log;
    for(size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(std::stod(a[i].second), std::stod(b[i].second), 1e-2 * std::stod(a[i].second)) << "update " << a[i].first;
  }
  std::string opts = "--transformer-dropout 0.1 --exponential-smoothing 0.01 --save-freq 15 --cpu-threads 0 --devices 0";
  RunResult full = marian("gpu-full", opts + " --after-batches 30");
  RunResult first = marian("gpu-resumed", opts + " --after-batches 15");
  RunResult second = marian("gpu-resumed", opts + " --after-batches 30", /*fresh=*/false);
  ASSERT_EQ(full.status, 0) << full.log;
  ASSERT_EQ(second.status, 0) << second.log;
  auto expected = costs(full.log), got = costs(first.log), rest = costs(second.log);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(expected.size(), got.size());
  for(size_t i = 0; i < got.size(); ++i)  // the embedding gradient's atomics may change last bits
    EXPECT_NEAR(std::stod(expected[i].second), std::stod(got[i].second), 1e-4 * std::stod(expected[i].second));
}

TEST(TrainEndToEnd, NoGpuIsAClearError) {
  if(gpuAvailable())
    GTEST_SKIP() << "a GPU is visible";
  RunResult r = marian("no-gpu", "--after-batches 1 --cpu-threads 0 --devices 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(r.log.find("GPU(s) are visible") != std::string::npos ||
              r.log.find("no GPU backend") != std::string::npos)
      << r.log;
}

TEST(TrainEndToEnd, AsyncAndS2SValidationCrossEntropyFalls) {
  std::string valid = " --valid-sets " + dir() + "/valid.src " + dir() + "/valid.trg --valid-freq 40";
  RunResult async = marian("async", "--after-batches 120 --cpu-threads 2" + valid);
  ASSERT_EQ(async.status, 0) << async.log;
  auto ce = validCE(async.log);
  ASSERT_GE(ce.size(), 3u) << async.log;
  EXPECT_LT(ce.back(), 0.8 * ce.front()) << async.log;

  RunResult s2s = marian("s2s", "--type s2s --dim-rnn 32 --after-batches 120" + valid);
  ASSERT_EQ(s2s.status, 0) << s2s.log;
  ce = validCE(s2s.log);
  ASSERT_GE(ce.size(), 3u) << s2s.log;
  EXPECT_LT(ce.back(), 0.8 * ce.front()) << s2s.log;
}

TEST(TrainEndToEnd, DivergenceIsAClearErrorAndKeepsTheLastCheckpoint) {
  RunResult ok = marian("diverge", "--after-batches 5 --save-freq 5");
  ASSERT_EQ(ok.status, 0) << ok.log;
  std::string model = dir() + "/diverge/model.npz";
  std::ifstream before(model, std::ios::binary);
  std::string saved((std::istreambuf_iterator<char>(before)), {});
  RunResult bad = marian("diverge", "--after-batches 30 --optimizer sgd --learn-rate 1e6 --clip-norm 0", false);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("diverged"), std::string::npos) << bad.log;
  std::ifstream after(model, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(after)), {}), saved);
}

TEST(TrainEndToEnd, BadInputsAreNamed) {
  std::string d = dir();
  std::system(("head -n 5 " + d + "/train.trg > " + d + "/short.trg").c_str());
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + d + "/train.src " + d +
                    "/short.trg --vocabs " + d + "/vocab.src.yml " + d + "/vocab.trg.yml 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  std::string out;
  while(fgets(buf, sizeof(buf), p))
    out += buf;
  EXPECT_NE(pclose(p), 0);
  EXPECT_NE(out.find("short.trg"), std::string::npos) << out;
  EXPECT_NE(out.find("differ in length"), std::string::npos) << out;
}

}  // namespace

namespace {

// One TSV file trains as its two columns do, held in memory and streamed; .gz streamed alike.
TEST(TrainEndToEnd, TsvAndGzipCorporaTrainAsTwoPlainFiles) {
  std::string d = e2e::corpusDir();
  std::system(("paste " + d + "/train.src " + d + "/train.trg > " + d + "/train.tsv && gzip -1 -c " + d +
               "/train.src > " + d + "/train.src.gz")
                  .c_str());
  for(std::string window : {"", " --shuffle-window 100"}) {
    SCOPED_TRACE(window.empty() ? "in memory" : "streamed");
    RunResult plain = e2e::run("plain", "--after-batches 15" + window);
    RunResult tsv = e2e::run("tsv", "--after-batches 15 --tsv --train-sets " + d + "/train.tsv" + window);
    RunResult gz = e2e::run("gz", "--after-batches 15 --train-sets " + d + "/train.src.gz " + d + "/train.trg" + window);
    ASSERT_EQ(plain.status, 0) << plain.log;
    ASSERT_EQ(tsv.status, 0) << tsv.log;
    ASSERT_EQ(gz.status, 0) << gz.log;
    ASSERT_EQ(costs(plain.log).size(), 3u) << plain.log;
    EXPECT_EQ(costs(tsv.log), costs(plain.log)) << tsv.log;
    EXPECT_EQ(costs(gz.log), costs(plain.log)) << gz.log;
  }
  RunResult two = e2e::run("tsv", "--after-batches 1 --tsv");  // the two files of the tiny options
  EXPECT_NE(two.status, 0);
  EXPECT_NE(two.log.find("--tsv: --train-sets needs one file"), std::string::npos) << two.log;
}

// Marian's other word vocabularies train the same model from the same ids as two .yml files: a
// word a line (made here as a .yml is), none given (TRAIN.yml made beside each training file), and
// a --tsv corpus's, made from its fields; with none given a --tsv corpus's is one for both sides.
TEST(TrainEndToEnd, MarianWordVocabulariesOfTheSameIdsTrainAlike) {
  std::string d = dir();
  RunResult yml = e2e::run("vocab-yml", "--after-batches 10");
  ASSERT_EQ(yml.status, 0) << yml.log;
  ASSERT_EQ(costs(yml.log).size(), 2u) << yml.log;
  std::string m = d + "/vocab-text";
  RunResult text = e2e::run("vocab-text", "--after-batches 10 --vocabs " + m + "/v.src.txt " + m + "/v.trg.txt");
  ASSERT_EQ(text.status, 0) << text.log;
  EXPECT_EQ(costs(text.log), costs(yml.log)) << text.log;
  EXPECT_EQ(e2e::readFile(m + "/v.src.txt").substr(0, 11), "</s>\n<unk>\n");

  m = d + "/vocab-none";
  std::system(("rm -rf " + m + " && mkdir -p " + m + " && cp " + d + "/train.src " + d + "/train.trg " + m + " && paste " +
               m + "/train.src " + m + "/train.trg > " + m + "/train.tsv")
                  .c_str());
  std::string options = std::regex_replace(e2e::tinyModelOptions(m), std::regex("--vocabs \\S+ \\S+ "), "");
  auto marianWithout = [&](const std::string& extra) {
    std::string cmd = "rm -f " + m + "/model.npz* && " + std::string(MARIAN_BIN_DIR) + "/marian " + options + extra +
                      " > " + m + "/log.txt 2>&1";
    int status = std::system(cmd.c_str());
    return RunResult{status, e2e::readFile(m + "/log.txt")};
  };
  RunResult none = marianWithout("--after-batches 10 --train-sets " + m + "/train.src " + m + "/train.trg");
  ASSERT_EQ(none.status, 0) << none.log;
  EXPECT_EQ(costs(none.log), costs(yml.log)) << none.log;
  EXPECT_EQ(e2e::readFile(m + "/train.src.yml"), e2e::readFile(d + "/vocab.src.yml"));
  std::string decoder = e2e::readFile(m + "/model.npz.decoder.yml");
  EXPECT_NE(decoder.find(m + "/train.src.yml"), std::string::npos) << decoder;
  EXPECT_NE(decoder.find(m + "/train.trg.yml"), std::string::npos) << decoder;

  RunResult tsv = marianWithout("--after-batches 10 --tsv --train-sets " + m + "/train.tsv --vocabs " + m + "/s.yml " +
                                m + "/t.yml");
  ASSERT_EQ(tsv.status, 0) << tsv.log;
  EXPECT_EQ(costs(tsv.log), costs(yml.log)) << tsv.log;
  EXPECT_EQ(e2e::readFile(m + "/t.yml"), e2e::readFile(d + "/vocab.trg.yml"));
  RunResult joint = marianWithout("--after-batches 10 --tsv --train-sets " + m + "/train.tsv");
  ASSERT_EQ(joint.status, 0) << joint.log;
  EXPECT_NE(joint.log.find("Created vocabulary '" + m + "/train.tsv.yml'"), std::string::npos) << joint.log;
  std::regex created("Created vocabulary");
  EXPECT_EQ(std::distance(std::sregex_iterator(joint.log.begin(), joint.log.end(), created), std::sregex_iterator()), 1)
      << joint.log;  // once, for both sides
}

}  // namespace
