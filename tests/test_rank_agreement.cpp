// checkRanksAgree on ranks in this process: every rank's corpus, vocabularies, pretrained model,
// batching, device count and options against rank 0's before training, and GPUs that ranks share. Equal setups pass on every rank; rank 0 names each
// rank that differs and how, and the job ends on every rank; a node's own options (devices,
// workspace, logging, the paths of its data copies) may differ. (Under mpirun, with a copy of
// the corpus per node: MultiNode.ARankWithAnotherCopyOrOptionsIsNamed.)
#include <gtest/gtest.h>

#include "comm/in_process_transport.h"
#include "options_helpers.h"
#include "training/loop/rank_agreement.h"

namespace marian {
namespace {

RankSetup setup() {
  RankSetup s;
  s.corpus = "2,000 lines; source 76,896 bytes, CRC-32 42851032; target 76,896 bytes, CRC-32 7600c665";
  s.vocabularies = "source 1,202 bytes, CRC-32 06141846; target 1,220 bytes, CRC-32 e2188416";
  s.batching = "--mini-batch 64 --mini-batch-words 0 --maxi-batch 100 --maxi-batch-sort trg --shuffle data";
  s.devices = 1;
  s.options = {{"learn-rate", "0.0001"}, {"mini-batch", "16"}, {"mini-batch-fit", "true"}};
  return s;
}

// What the job ends with when rank r runs setups[r] (empty when every rank returns).
std::string runOnRanks(const std::vector<RankSetup>& setups) {
  InProcessNetwork network(int(setups.size()));
  try {
    network.run([&](Transport& t) { checkRanksAgree(t, setups[size_t(t.rank())]); });
  } catch(const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RankAgreement, EqualSetupsPassOnEveryRank) {
  EXPECT_EQ(runOnRanks({setup(), setup(), setup()}), "");
  EXPECT_EQ(runOnRanks({setup()}), "");
}

TEST(RankAgreement, RankZeroNamesEveryRankThatDiffersAndHow) {
  std::vector<RankSetup> s(4, setup());
  s[2].corpus = "1,500 lines; source 57,001 bytes, CRC-32 0badc0de; target 57,100 bytes, CRC-32 0ddba11e";
  s[2].batching = setup().batching + " --mini-batch-fit-step 10 --mini-batch-fit (96 40 sentences)";
  s[3].pretrained = "30,265,911 bytes, CRC-32 0123abcd";
  s[3].devices = 2;
  s[3].vocabularies = "source 1,202 bytes, CRC-32 06141846; target 1,220 bytes, CRC-32 00000000";
  s[3].options["learn-rate"] = "0.0003";
  s[3].options.erase("mini-batch-fit");
  s[3].options["sync-sgd"] = "true";
  std::string error = runOnRanks(s);
  EXPECT_NE(error.find("The ranks of this job do not train alike"), std::string::npos) << error;
  EXPECT_EQ(error.find("rank 1:"), std::string::npos) << error;
  EXPECT_NE(error.find("\nrank 2: its training corpus (" + s[2].corpus + ") is not rank 0's (" + setup().corpus + ")"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\nrank 3: its vocabularies (" + s[3].vocabularies + ") are not rank 0's (" +
                       setup().vocabularies + ")"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\nrank 2: it cuts its batches with " + s[2].batching + " where rank 0 cuts them with " +
                       setup().batching),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\nrank 3: its --pretrained-model (" + s[3].pretrained + ") is not rank 0's (none)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\nrank 3: it trains on 2 device(s), rank 0 on 1"), std::string::npos) << error;
  // the options a node may set for itself, from the option table
  EXPECT_NE(error.find("only a node's own may differ: --config, "), std::string::npos) << error;
  EXPECT_NE(error.find("--workspace"), std::string::npos) << error;
  EXPECT_EQ(error.find("--learn-rate,"), std::string::npos) << error;
  EXPECT_NE(error.find("\nrank 3: its options differ: --learn-rate 0.0003 (rank 0: 0.0001), --mini-batch-fit not set "
                       "(rank 0: true), --sync-sgd true (rank 0: not set)"),
            std::string::npos)
      << error;
}

TEST(RankAgreement, ManyDifferingOptionsAreCounted) {
  RankSetup root = setup(), other = setup();
  for(int k = 0; k < 10; ++k)
    other.options["option-" + std::to_string(k)] = "1";
  std::string said = setupDifferences(root, other, 5);
  EXPECT_EQ(said.rfind("rank 5: its options differ: --option-0 1 (rank 0: not set), ", 0), 0u) << said;
  EXPECT_NE(said.find("--option-7 1 (rank 0: not set) and 2 more"), std::string::npos) << said;
  EXPECT_EQ(setupDifferences(root, root, 5), "");
}

// What the ranks compare of their options: a node's own hardware, logging and copies' paths may
// differ, the rest not; a number is compared as a number.
TEST(RankAgreement, ANodesOwnOptionsAreNotCompared) {
  using optionstest::parse;
  using optionstest::temp;
  Options root = parse({"--devices", "0", "--workspace", "1000", "--log", temp("a.log"), "--data-threads", "2",
                        "--tempdir", "/tmp", "--learn-rate", "0.0001"});
  Options node = parse({"--devices", "3", "--workspace", "4000", "--log", temp("b.log"), "--data-threads", "8",
                        "--tempdir", "/var/tmp", "--learn-rate", "1e-4", "--log-level", "warn", "--cpu-threads", "1"});
  EXPECT_EQ(node.sharedByRanks(), root.sharedByRanks());
  EXPECT_EQ(root.sharedByRanks().count("train-sets"), 0u);
  EXPECT_EQ(root.sharedByRanks().at("learn-rate"), "0.0001");
  Options other = parse({"--learn-rate", "0.0003", "--after", "10e"});
  std::map<std::string, std::string> a = root.sharedByRanks(), b = other.sharedByRanks();
  RankSetup x = setup(), y = setup();
  x.options = a;
  y.options = b;
  EXPECT_NE(setupDifferences(x, y, 1).find("--learn-rate 0.0003 (rank 0: 0.0001)"), std::string::npos)
      << setupDifferences(x, y, 1);
  EXPECT_NE(setupDifferences(x, y, 1).find("--after 10e (rank 0: "), std::string::npos) << setupDifferences(x, y, 1);
}

// GPUs that several ranks train on are named with their host, each once: legal (the job goes on,
// rank 0 warns), but each rank then runs at a fraction of the GPU.
TEST(RankAgreement, GpusSharedByRanksAreNamed) {
  EXPECT_EQ(gpusSharedByRanks({{}, {}}), "");
  const std::string a1 = "0000:1a:00.0 of host n1", b1 = "0000:1b:00.0 of host n1", a2 = "0000:1a:00.0 of host n2";
  EXPECT_EQ(gpusSharedByRanks({{a1}, {b1}, {a2}}), "");
  EXPECT_EQ(gpusSharedByRanks({{a1, b1}, {b1, a1}, {a2}, {b1}}),
            "GPU 0000:1a:00.0 of host n1: ranks 0, 1\nGPU 0000:1b:00.0 of host n1: ranks 0, 1, 3");
  std::vector<RankSetup> s(3, setup());
  s[1].gpus = s[2].gpus = {a1};
  s[0].gpus = {"0000:1a:00.0 of host n0"};
  testing::internal::CaptureStderr();
  std::string error = runOnRanks(s);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(error, "");
  EXPECT_NE(log.find("Several ranks train on the same GPU"), std::string::npos) << log;
  EXPECT_NE(log.find("GPU 0000:1a:00.0 of host n1: ranks 1, 2"), std::string::npos) << log;
  EXPECT_EQ(log.find("host n0"), std::string::npos) << log;
  EXPECT_TRUE(gpusOf({cpuDevice(0), cpuDevice(1)}).empty());
}

}  // namespace
}  // namespace marian
