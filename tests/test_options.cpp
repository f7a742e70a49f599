// Options: Marian's names and defaults, YAML + command-line precedence, clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/error.h"
#include "common/options.h"
#include "common/scheduling_parameter.h"
#include "tensors/backend.h"
#include "tensors/devices_from_options.h"

namespace marian {
namespace {

// per process: ctest runs the cases of this file in parallel processes
std::string temp(const std::string& name) {
  return ::testing::TempDir() + "marian_opt_" + std::to_string(getpid()) + "_" + name;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Two existing corpus files so that training-mode parsing passes its file checks.
std::vector<std::string> corpusArgs() {
  write(temp("a.src"), "x\n");
  write(temp("a.trg"), "y\n");
  return {"--train-sets", temp("a.src"), temp("a.trg")};
}

Options parse(std::vector<std::string> args) {
  std::vector<std::string> all = {"marian"};
  for(const std::string& a : corpusArgs())
    all.push_back(a);
  all.insert(all.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for(const std::string& a : all)
    argv.push_back(a.c_str());
  return parseOptions(int(argv.size()), argv.data(), ProgramMode::training).options;
}

std::string errorOf(std::vector<std::string> args) {
  try {
    parse(args);
  } catch(const Error& e) {
    return e.what();
  }
  return "";
}

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

TEST(Options, MissingFilesAreNamed) {
  std::string e = errorOf({"--train-sets", "/no/such.src", temp("a.trg")});
  EXPECT_NE(e.find("/no/such.src"), std::string::npos) << e;
  e = errorOf({"--valid-sets", "/no/valid.src", "/no/valid.trg"});
  EXPECT_NE(e.find("/no/valid.src"), std::string::npos) << e;
  e = errorOf({"-c", "/no/config.yml"});
  EXPECT_NE(e.find("/no/config.yml"), std::string::npos) << e;
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
  EXPECT_EQ(parse({"-c", temp("dumped.yml")}).asYaml(), p.options.asYaml());
}

TEST(SchedulingParameter, UnitsAndErrors) {
  auto p = SchedulingParameter::parse("500", "x");
  EXPECT_EQ(p.n, 500u);
  EXPECT_EQ(p.unit, SchedulingUnit::updates);
  EXPECT_EQ(SchedulingParameter::parse("2e", "x").unit, SchedulingUnit::epochs);
  EXPECT_EQ(SchedulingParameter::parse("20000t", "x").unit, SchedulingUnit::labels);
  EXPECT_THROW(SchedulingParameter::parse("10x", "valid-freq"), Error);
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

}  // namespace
}  // namespace marian
