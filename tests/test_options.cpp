// Options: Marian's names and defaults, YAML + command-line precedence, clear errors.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "common/model_config.h"
#include "common/options.h"
#include "common/scheduling_parameter.h"
#include "options_helpers.h"
#include "tensors/backend.h"
#include "tensors/devices_from_options.h"

namespace marian {
namespace {

using namespace optionstest;

TEST(Options, MarianDefaults) {
  Options o = parse({});
  EXPECT_EQ(o.get<int>("mini-batch"), 64);
  EXPECT_EQ(o.get<int>("maxi-batch"), 100);
  EXPECT_FLOAT_EQ(o.get<float>("learn-rate"), 0.0001f);
  EXPECT_FLOAT_EQ(o.get<float>("clip-norm"), 1.f);
  EXPECT_EQ(o.get<std::string>("optimizer"), "adam");
  EXPECT_EQ(o.get<std::string>("cost-type"), "ce-sum");
  EXPECT_EQ(o.get<std::string>("transformer-postprocess"), "dan");
  EXPECT_EQ(o.get<std::string>("valid-freq"), "10000u");
  EXPECT_EQ(o.get<int>("early-stopping"), 10);
  EXPECT_EQ(o.get<std::vector<std::string>>("valid-metrics"), std::vector<std::string>{"cross-entropy"});
  EXPECT_FALSE(o.get<bool>("sync-sgd"));
  // an epoch's batches in Marian's order; =false as Marian's flags take it
  EXPECT_TRUE(o.get<bool>("shuffle-within-maxi-batch"));
  EXPECT_FALSE(parse({"--shuffle-within-maxi-batch=false"}).get<bool>("shuffle-within-maxi-batch"));
}

TEST(Options, LaterConfigFilesWinAndTheCommandLineWinsOverAll) {
  write(temp("one.yml"), "dim-emb: 128\nenc-depth: 3\nvalid-metrics: [perplexity]\n");
  write(temp("two.yml"), "dim-emb: 256\n");
  Options o = parse({"--config", temp("one.yml"), temp("two.yml")});
  EXPECT_EQ(o.get<int>("dim-emb"), 256);
  EXPECT_EQ(o.get<int>("enc-depth"), 3);
  EXPECT_EQ(o.get<std::vector<std::string>>("valid-metrics"), std::vector<std::string>{"perplexity"});
  o = parse({"-c", temp("one.yml"), temp("two.yml"), "--dim-emb", "64", "--sync-sgd"});
  EXPECT_EQ(o.get<int>("dim-emb"), 64);
  EXPECT_TRUE(o.get<bool>("sync-sgd"));
}

TEST(Options, ListsAndImplicitValues) {
  Options o = parse({"--optimizer-params", "0.9", "0.98", "1e-9", "--exponential-smoothing", "--cpu-threads", "2"});
  EXPECT_EQ(o.get<std::vector<float>>("optimizer-params").size(), 3u);
  EXPECT_FLOAT_EQ(o.get<float>("exponential-smoothing"), 1e-4f);
  o = parse({"--exponential-smoothing", "0.001"});
  EXPECT_FLOAT_EQ(o.get<float>("exponential-smoothing"), 0.001f);
  // negative numbers inside a list, as Marian takes them, and the options after it
  o = parse({"--optimizer-params", "0.5", "-0.5", "-1e-9", "--cpu-threads", "2", "--vocabs", "a.spm", "b.spm"});
  EXPECT_EQ(o.get<std::vector<float>>("optimizer-params"), (std::vector<float>{0.5f, -0.5f, -1e-9f}));
  EXPECT_EQ(o.get<size_t>("cpu-threads"), 2u);
  EXPECT_EQ(o.get<std::vector<std::string>>("vocabs"), (std::vector<std::string>{"a.spm", "b.spm"}));
}

TEST(Options, UnknownOptionsAreNamed) {
  EXPECT_NE(errorOf({"--dim-embedding", "5"}).find("--dim-embedding"), std::string::npos);
  write(temp("bad.yml"), "dim-emb: 8\nlearning-rate: 0.1\n");
  std::string e = errorOf({"-c", temp("bad.yml")});
  EXPECT_NE(e.find("learning-rate"), std::string::npos) << e;
  EXPECT_NE(e.find("bad.yml"), std::string::npos) << e;
}

TEST(Options, WrongTypesAreNamed) {
  std::string e = errorOf({"--dim-emb", "large"});
  EXPECT_NE(e.find("dim-emb"), std::string::npos) << e;
  EXPECT_NE(e.find("large"), std::string::npos) << e;
  write(temp("type.yml"), "learn-rate: fast\n");
  e = errorOf({"-c", temp("type.yml")});
  EXPECT_NE(e.find("learn-rate"), std::string::npos) << e;
  EXPECT_NE(e.find("type.yml"), std::string::npos) << e;
}

// a list's values are checked against its choices, as a single value's (on the command line and
// in a config file), before any data is read
TEST(Options, AnUnknownValidationMetricIsNamed) {
  std::string e = errorOf({"--valid-metrics", "cross-entropy", "BLEU"});
  EXPECT_NE(e.find("--valid-metrics must be cross-entropy, ce-mean-words, perplexity, bleu, bleu-detok, chrf, "
                   "translation or valid-script, not 'BLEU'"),
            std::string::npos)
      << e;
  write(temp("metric.yml"), "valid-metrics: [perplexity, bleu-segmented]\n");
  e = errorOf({"-c", temp("metric.yml")});
  EXPECT_NE(e.find("not 'bleu-segmented'"), std::string::npos) << e;
}

// What a resume compares with the architecture its checkpoint was saved with: every model option
// that differs; the vocabulary sizes and the version are not compared.
TEST(Options, ArchitectureDifferencesNameEachOption) {
  Options o = parse({"--dim-emb", "32", "--transformer-heads", "4"});
  std::string saved = modelConfigYaml(o, {18, 18});
  EXPECT_EQ(architectureDifferences(saved, o), "");
  EXPECT_EQ(architectureDifferences(saved, parse({"--dim-emb", "32", "--transformer-heads", "4", "--dim-vocabs", "7", "7"})),
            "");
  Options other = parse({"--dim-emb", "32", "--transformer-heads", "4", "--transformer-ffn-activation", "relu",
                         "--transformer-postprocess", "da"});
  EXPECT_EQ(architectureDifferences(saved, other),
            "--transformer-ffn-activation swish (this run: relu), --transformer-postprocess dan (this run: da)");
}

TEST(Options, MissingFilesAreNamed) {
  std::string e = errorOf({"--train-sets", "/no/such.src", temp("a.trg")});
  EXPECT_NE(e.find("/no/such.src"), std::string::npos) << e;
  e = errorOf({"--valid-sets", "/no/valid.src", "/no/valid.trg"});
  EXPECT_NE(e.find("/no/valid.src"), std::string::npos) << e;
  e = errorOf({"--valid-sets", temp("a.src")});  // named before the corpus loads
  EXPECT_NE(e.find("--valid-sets needs a source and a target file, got 1"), std::string::npos) << e;
  e = errorOf({"-c", "/no/config.yml"});
  EXPECT_NE(e.find("/no/config.yml"), std::string::npos) << e;
}

// Marian's vocabularies without --vocabs: TRAIN.yml beside each training file, or the .yaml or
// .json there; one for both sides of a --tsv file.
TEST(Options, WithoutVocabsEachTrainingFileHasItsOwnBesideIt) {
  std::remove((temp("a.src") + ".yml").c_str());
  write(temp("a.trg") + ".json", "{}");
  EXPECT_EQ(parse({}).get<std::vector<std::string>>("vocabs"),
            (std::vector<std::string>{temp("a.src") + ".yml", temp("a.trg") + ".json"}));
  EXPECT_EQ(parse({"--vocabs", "s.spm", "t.spm"}).get<std::vector<std::string>>("vocabs"),
            (std::vector<std::string>{"s.spm", "t.spm"}));
  write(temp("a.tsv"), "x\ty\n");
  std::vector<std::string> args = {"marian", "--tsv", "--train-sets", temp("a.tsv")};
  std::vector<const char*> argv;
  for(const std::string& a : args)
    argv.push_back(a.c_str());
  Options tsv = parseOptions(int(argv.size()), argv.data(), ProgramMode::training).options;
  EXPECT_EQ(tsv.get<std::vector<std::string>>("vocabs"), (std::vector<std::string>{temp("a.tsv") + ".yml", temp("a.tsv") + ".yml"}));
}

TEST(Options, DumpConfigPrintsTheEffectiveYaml) {
  std::vector<std::string> args = {"marian", "--dump-config", "--dim-emb", "96"};
  for(const std::string& a : corpusArgs())
    args.push_back(a);
  std::vector<const char*> argv;
  for(const std::string& a : args)
    argv.push_back(a.c_str());
  ParsedOptions p = parseOptions(int(argv.size()), argv.data(), ProgramMode::training);
  EXPECT_TRUE(p.exitNow);
  EXPECT_NE(p.print.find("dim-emb: 96"), std::string::npos) << p.print;
  EXPECT_NE(p.print.find("learn-rate: 0.0001"), std::string::npos);
  EXPECT_EQ(p.print.find("dump-config"), std::string::npos);
  // what --dump-config prints is a valid config file that gives the same options
  write(temp("dumped.yml"), p.print);
  EXPECT_EQ(parse({"-c", temp("dumped.yml")}).asYaml(), parse({"--dim-emb", "96"}).asYaml());
}

TEST(SchedulingParameter, UnitsAndErrors) {
  auto p = SchedulingParameter::parse("500", "x");
  EXPECT_EQ(p.n, 500u);
  EXPECT_EQ(p.unit, SchedulingUnit::updates);
  EXPECT_EQ(SchedulingParameter::parse("2e", "x").unit, SchedulingUnit::epochs);
  EXPECT_EQ(SchedulingParameter::parse("20000t", "x").unit, SchedulingUnit::labels);
  EXPECT_THROW(SchedulingParameter::parse("10x", "valid-freq"), Error);
  // Marian's multipliers and commas
  EXPECT_EQ(SchedulingParameter::parse("100Ku", "x").n, 100000u);
  EXPECT_EQ(SchedulingParameter::parse("10Gt", "x").n, 10000000000u);
  EXPECT_EQ(SchedulingParameter::parse("10Gt", "x").unit, SchedulingUnit::labels);
  EXPECT_EQ(SchedulingParameter::parse("2.5k", "x").n, 2500u);
  EXPECT_EQ(SchedulingParameter::parse("1,000,000t", "x").n, 1000000u);
  EXPECT_THROW(SchedulingParameter::parse("1.5u", "x"), Error);  // whole numbers
  EXPECT_THROW(SchedulingParameter::parse("ku", "x"), Error);
  EXPECT_THROW(SchedulingParameter::parse("-5u", "x"), Error);
  // Marian's --after list: criteria between commas that end in a unit or multiplier; other commas
  // are a count's
  std::vector<SchedulingParameter> criteria = SchedulingParameter::parseList("10e,300Ku,20Gt", "after");
  ASSERT_EQ(criteria.size(), 3u);
  EXPECT_EQ(criteria[0].unit, SchedulingUnit::epochs);
  EXPECT_EQ(criteria[0].n, 10u);
  EXPECT_EQ(criteria[1].unit, SchedulingUnit::updates);
  EXPECT_EQ(criteria[1].n, 300000u);
  EXPECT_EQ(criteria[2].unit, SchedulingUnit::labels);
  EXPECT_EQ(criteria[2].n, 20000000000u);
  std::vector<SchedulingParameter> one = SchedulingParameter::parseList("1,000,000t", "after");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].n, 1000000u);
  EXPECT_EQ(SchedulingParameter::parseList("0e", "after").size(), 1u);
  EXPECT_THROW(SchedulingParameter::parseList("10e,x5u", "after"), Error);
}

// Marian users write "-d 0 1" for two GPUs: with this program's --cpu-threads 1 the ids go unused,
// which the log says (a config file's devices: Options.DevicesOfAConfigFileOnTheCpuAreSaid).
TEST(Options, DevicesWithCpuThreadsAreAWarning) {
  ParsedOptions p = parsed({"-d", "0", "1"});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("--devices 0 1 is not used: --cpu-threads 1"), std::string::npos) << p.warnings[0];
  EXPECT_TRUE(parsed({"-d", "0", "1", "--cpu-threads", "0"}).warnings.empty());
}

TEST(Options, DevicesAreCpuThreadsOrTheGpusOfDevices) {
  std::vector<Device> cpus = devicesFromOptions(parse({"--cpu-threads", "3"}));
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus[2], cpuDevice(2));
  auto errorOfDevices = [](std::vector<std::string> args) {
    try {
      devicesFromOptions(parse(args));
    } catch(const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(errorOfDevices({"--cpu-threads", "0", "--devices", "x1"}).find("'x1' is not a GPU id"),
            std::string::npos);
  int visible = gpuDeviceCount();
  std::string tooMany = errorOfDevices({"--cpu-threads", "0", "--devices", std::to_string(visible)});
  if(gpuBackendCompiled())
    EXPECT_NE(tooMany.find("GPU(s) are visible"), std::string::npos) << tooMany;
  else
    EXPECT_NE(tooMany.find("no GPU backend"), std::string::npos) << tooMany;
  if(visible > 0) {
    std::vector<Device> gpus = devicesFromOptions(parse({"--cpu-threads", "0", "--devices", "0"}));
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0], gpuDevice(0));
  }
  EXPECT_NE(errorOfDevices({"--cpu-threads", "0", "--devices", "0", "0"}).find("twice"), std::string::npos);
}

// Each CPU device's threads: this process's cores divided among its devices and the ranks that
// share them (mpirun's local size, simnet's MARIAN_RANKS_SHARING_CORES, --ranks-in-process).
TEST(Options, RanksSharingTheCoresDivideEachDevicesThreads) {
  for(const char* name : {"MARIAN_BLAS_THREADS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MARIAN_RANKS_SHARING_CORES"})
    ASSERT_EQ(std::getenv(name), nullptr) << name << " is set: the test needs the machine's own count";
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int cores = CPU_COUNT(&set);
  std::vector<Device> one = {cpuDevice(0)}, two = {cpuDevice(0), cpuDevice(1)};
  EXPECT_EQ(blasThreadsPerDevice(one), cores);
  EXPECT_EQ(blasThreadsPerDevice(two), std::max(1, cores / 2));
  setenv("MARIAN_RANKS_SHARING_CORES", "2", 1);
  EXPECT_EQ(blasThreadsPerDevice(one), std::max(1, cores / 2));
  EXPECT_EQ(blasThreadsPerDevice(two), std::max(1, cores / 4));
  unsetenv("MARIAN_RANKS_SHARING_CORES");
  shareCoresWithRanksInProcess(3);
  EXPECT_EQ(blasThreadsPerDevice(one), std::max(1, cores / 3));
  shareCoresWithRanksInProcess(1);
  EXPECT_EQ(blasThreadsPerDevice(one), cores);
}

// Values a user mistypes: every one is an error naming the option and its range (issue 19: each
// was accepted silently, or crashed: heads 0 divided by zero, 100000 threads ran out of memory).
TEST(Options, NumbersOutOfRangeAreNamed) {
  std::vector<std::pair<std::string, std::string>> bad = {
      {"transformer-heads", "0"}, {"mini-batch", "-1"},          {"mini-batch-words", "-1"},
      {"learn-rate", "-1"},       {"max-length", "-1"},          {"workspace", "0"},
      {"workspace", "-5"},        {"dim-vocabs", "-5"},          {"enc-depth", "0"},
      {"dec-depth", "-1"},        {"dec-depth", "2147483647"},   {"exponential-smoothing", "-1"},
      {"exponential-smoothing", "1e30"}, {"clip-norm", "-1"},    {"valid-mini-batch", "0"},
      {"cpu-threads", "2147483647"}, {"dim-emb", "2000000000"},  {"compression-density", "0"},
      {"transformer-dropout", "1"}, {"seed", "-1"}};
  for(auto& [name, value] : bad) {
    std::string error = errorOf({"--" + name, value});
    EXPECT_NE(error.find("--" + name + " " + value), std::string::npos) << name << " " << value << ": " << error;
    EXPECT_NE(error.find("out of range"), std::string::npos) << name << " " << value << ": " << error;
  }
  EXPECT_NE(errorOf({"--label-smoothing", "nan"}).find("label-smoothing"), std::string::npos);
  // in a config file: the file and line are named
  write(temp("range.yml"), "dim-emb: 64\nenc-depth: 0\n");
  std::string error = errorOf({"-c", temp("range.yml")});
  EXPECT_NE(error.find("--enc-depth 0"), std::string::npos) << error;
  EXPECT_NE(error.find("range.yml', line 2"), std::string::npos) << error;
  // a float option at its own bound is in range (0.01 as a float widened to double is below 0.01)
  EXPECT_FLOAT_EQ(parse({"--max-length-factor", "0.01"}).get<float>("max-length-factor"), 0.01f);
  // the seed a run draws (32 bits) can be given back
  EXPECT_EQ(parse({"--seed", "3054388494"}).get<size_t>("seed"), 3054388494u);
}

TEST(Options, RepeatedConfigFlagsMergeInOrder) {
  write(temp("a.yml"), "dim-emb: 128\nenc-depth: 3\n");
  write(temp("b.yml"), "dim-emb: 256\n");
  Options o = parse({"-c", temp("a.yml"), "-c", temp("b.yml")});
  EXPECT_EQ(o.get<int>("dim-emb"), 256);
  EXPECT_EQ(o.get<int>("enc-depth"), 3);  // a.yml was silently ignored before
}

TEST(Options, BadConfigFilesAreNamedWithTheLine) {
  write(temp("twice.yml"), "dim-emb: 128\nenc-depth: 2\ndim-emb: 256\n");
  std::string error = errorOf({"-c", temp("twice.yml")});
  EXPECT_NE(error.find("'dim-emb' is given twice (lines 1 and 3)"), std::string::npos) << error;
  EXPECT_NE(error.find("twice.yml"), std::string::npos) << error;
  write(temp("nonscalar.yml"), "[a, b]: 1\n");
  error = errorOf({"-c", temp("nonscalar.yml")});
  EXPECT_NE(error.find("nonscalar.yml', line 1: a key must be an option name"), std::string::npos) << error;
  error = errorOf({"-c", ::testing::TempDir()});
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
  EXPECT_NE(error.find(::testing::TempDir()), std::string::npos) << error;
}

// Marian's decoder.yml carries relative-paths: false; with true, paths written in a config file
// are relative to that file's folder (the command line's stay as given).
TEST(Options, RelativePathsAreResolvedAgainstTheConfigFile) {
  std::string dir = temp("relcfg");
  std::filesystem::create_directories(dir);
  write(dir + "/x.src", "a\n");
  write(dir + "/x.trg", "b\n");
  write(dir + "/train.yml", "relative-paths: true\ntrain-sets: [x.src, x.trg]\nmodel: m/model.npz\nlog: /abs/train.log\n");
  std::vector<const char*> argv = {"marian", "-c", nullptr, "--valid-sets", "v.src", "v.trg"};
  std::string cfg = dir + "/train.yml";
  argv[2] = cfg.c_str();
  try {
    parseOptions(int(argv.size()), argv.data(), ProgramMode::training);
    ADD_FAILURE() << "v.src (given on the command line) must stay relative to the working folder";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'v.src'"), std::string::npos) << e.what();
  }
  Options o = parseOptions(3, argv.data(), ProgramMode::training).options;
  EXPECT_EQ(o.get<std::vector<std::string>>("train-sets"), (std::vector<std::string>{dir + "/x.src", dir + "/x.trg"}));
  EXPECT_EQ(o.get<std::string>("model"), dir + "/m/model.npz");
  EXPECT_EQ(o.get<std::string>("log"), "/abs/train.log");
  // --data-weighting with --tsv is a field's index, not a path: as read, and as written again
  write(dir + "/x.tsv", "a\tb\t1\n");
  write(dir + "/tsv.yml", "relative-paths: true\ntsv: true\ntrain-sets: [x.tsv]\ndata-weighting: 2\n");
  write(dir + "/w.yml", "relative-paths: true\ntrain-sets: [x.src, x.trg]\ndata-weighting: w.txt\n");
  write(dir + "/w.txt", "1\n");
  std::string tsvCfg = dir + "/tsv.yml", fileCfg = dir + "/w.yml";
  const char* tsvArgv[] = {"marian", "-c", tsvCfg.c_str(), "--relative-paths"};
  Options tsv = parseOptions(4, tsvArgv, ProgramMode::training).options;
  EXPECT_EQ(tsv.get<std::string>("data-weighting"), "2");
  EXPECT_NE(tsv.asYaml().find("data-weighting: 2\n"), std::string::npos) << tsv.asYaml();
  const char* fileArgv[] = {"marian", "-c", fileCfg.c_str()};
  EXPECT_EQ(parseOptions(3, fileArgv, ProgramMode::training).options.get<std::string>("data-weighting"), dir + "/w.txt");
}

TEST(Options, AbbreviatedOptionsAreUnknown) {
  // as in Marian, a name is whole: --lr-decay is its own option, --lr-decay-inv no other's
  EXPECT_EQ(parse({"--lr-decay", "0.5"}).get<std::vector<std::string>>("lr-decay-inv-sqrt"),
            std::vector<std::string>{"0"});
  EXPECT_NE(errorOf({"--lr-decay-inv", "100"}).find("Unknown option"), std::string::npos);
  EXPECT_NE(errorOf({"--learn", "0.5"}).find("Unknown option"), std::string::npos);
}

TEST(Options, CpuDevicesAreBoundedByTheCores) {
  try {
    devicesFromOptions(parse({"--cpu-threads", "1024"}));
    if(std::thread::hardware_concurrency() < 128)
      ADD_FAILURE() << "1024 CPU devices on " << std::thread::hardware_concurrency() << " cores were accepted";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--cpu-threads 1024"), std::string::npos) << e.what();
  }
}

// A model configuration that does not set --transformer-postprocess-top has none, as in Marian
// (its default ""), pre-norm or not, with a version key or without.
TEST(Options, AModelConfigWithoutPostprocessTopHasNoTopNorm) {
  EXPECT_EQ(modelOptions("transformer-preprocess: n\nversion: v1.12.43\n", "marian")
                .get<std::string>("transformer-postprocess-top"),
            "");
  EXPECT_EQ(modelOptions("transformer-preprocess: n\n", "model.npz.yml").get<std::string>("transformer-postprocess-top"),
            "");
  EXPECT_EQ(modelOptions("transformer-preprocess: n\ntransformer-postprocess-top: n\n", "model.npz.yml")
                .get<std::string>("transformer-postprocess-top"),
            "n");
}

TEST(Options, ModelOptionsReadMarianEmbeddedConfigWithItsNul) {
  // keys of Marian's own model files this program has no use for are ignored there (only there)
  std::string yaml = "type: s2s\ndim-emb: 48\nversion: v1.12.43 a0b1c2d 2024-01-01\nauthors: false\n";
  yaml.push_back('\0');
  Options o = modelOptions(yaml, "model.npz (special:model.yml)");
  EXPECT_EQ(o.get<std::string>("type"), "s2s");
  EXPECT_EQ(o.get<int>("dim-emb"), 48);
  EXPECT_EQ(o.get<int>("enc-depth"), 1);  // defaults under it
}

// Options built in code (tests, a model's YAML) read the table's defaults and its choices too: a
// default is written in one place, and a value outside an option's choices is an error naming
// the option whichever way the options were made.
TEST(Options, CodeBuiltOptionsReadTheTablesDefaultsAndChoices) {
  Options empty;
  EXPECT_FLOAT_EQ(empty.get<float>("clip-norm"), 1.f);
  EXPECT_EQ(empty.get<std::string>("shuffle"), "data");
  EXPECT_FLOAT_EQ(empty.get<float>("learn-rate"), 0.0001f);
  auto errorOfGet = [](const Options& o, const std::string& key) {
    try {
      o.get<std::string>(key);
    } catch(const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(errorOfGet(empty, "train-sets").find("'train-sets' is required"), std::string::npos)
      << "an option without a default stays required";
  EXPECT_NE(errorOfGet(empty, "workspace").find("'workspace' is required"), std::string::npos)
      << "--workspace's default differs between marian and marian-decoder";
  Options sideways(YAML::Load("shuffle: sideways\nlocal-gradients: partial\n"));
  EXPECT_EQ(errorOfGet(sideways, "shuffle"), "--shuffle must be data, batches or none, not 'sideways'");
  EXPECT_EQ(sideways.get<std::string>("local-gradients"), "partial");
  // parsing checks each program's own choices: marian-decoder sorts by source or not at all
  EXPECT_EQ(errorOf({"--shuffle", "sideways"}), "--shuffle must be data, batches or none, not 'sideways' (on the command line)");
  Options trg(YAML::Load("maxi-batch-sort: trg\n"));
  EXPECT_EQ(trg.get<std::string>("maxi-batch-sort"), "trg");
}

}  // namespace
}  // namespace marian
