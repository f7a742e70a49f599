// Marian's own configuration files read here with -c (a model.npz.yml Marian wrote, its options
// this program lacks) and what this program writes as one, read by Marian.
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>

#include <yaml-cpp/yaml.h>

#include "options_helpers.h"

namespace marian {
namespace {

using namespace optionstest;

// A model.npz.yml as Marian v1.12 writes it (marian-examples' transformer recipe: its version
// key, options this program has no use for, Marian's option values) is read with -c: the options
// it shares take effect, the others are ignored; a feature of Marian's that changes the model is
// refused unless it has Marian's default. In a user's own config an unknown option stays an error.
TEST(Options, MarianWrittenModelConfigIsRead) {
  const std::string marianYml =
      "authors: false\ncite: false\nbuild-info: \"\"\nworkspace: 10000\nlog: model/train.log\nlog-level: info\n"
      "log-time-zone: \"\"\nquiet: false\nquiet-translation: true\nseed: 1111\ncheck-nan: false\n"
      "interpolate-env-vars: false\nrelative-paths: false\ndump-config: \"\"\nsigterm: save-and-exit\n"
      "model: model/model.npz\nignore-model-config: false\ntype: transformer\ndim-vocabs:\n  - 36000\n  - 36000\n"
      "dim-emb: 512\nfactors-dim-emb: 0\nlemma-dim-emb: 0\ndim-rnn: 1024\nenc-type: bidirectional\nenc-cell: gru\n"
      "enc-cell-depth: 1\nenc-depth: 6\ndec-cell: gru\ndec-cell-base-depth: 2\ndec-cell-high-depth: 1\n"
      "dec-depth: 6\nskip: false\nlayer-normalization: false\nright-left: false\ninput-types:\n  []\n"
      "tied-embeddings: false\ntied-embeddings-src: false\ntied-embeddings-all: true\ntransformer-heads: 8\n"
      "transformer-no-projection: false\ntransformer-pool: false\ntransformer-dim-ffn: 2048\n"
      "transformer-decoder-dim-ffn: 0\ntransformer-ffn-depth: 2\ntransformer-decoder-ffn-depth: 0\n"
      "transformer-ffn-activation: swish\ntransformer-dim-aan: 2048\ntransformer-decoder-autoreg: self-attention\n"
      "transformer-tied-layers:\n  []\ntransformer-guided-alignment-layer: last\ntransformer-preprocess: \"\"\n"
      "transformer-postprocess: dan\ntransformer-postprocess-emb: d\ntransformer-postprocess-top: \"\"\n"
      "transformer-train-position-embeddings: false\nulr: false\ndropout-rnn: 0\ndropout-src: 0\ndropout-trg: 0\n"
      "transformer-dropout: 0.1\ntransformer-dropout-attention: 0\ntransformer-dropout-ffn: 0\n"
      "cost-type: ce-mean-words\nmulti-loss-type: sum\nunlikelihood-loss: false\noverwrite: false\n"
      "overwrite-checkpoint: true\nno-reload: false\nno-restore-corpus: false\ntrain-sets:\n  - data/corpus.bpe.en\n"
      "  - data/corpus.bpe.de\nvocabs:\n  - model/vocab.ende.yml\n  - model/vocab.ende.yml\nsentencepiece-alphas:\n"
      "  []\nsentencepiece-options: \"\"\nsentencepiece-max-lines: 2000000\nafter-epochs: 0\nafter-batches: 0\n"
      "after: 0e\ndisp-freq: 500\ndisp-first: 0\ndisp-label-counts: true\nsave-freq: 5000\nlogical-epoch:\n"
      "  - 1e\n  - 0\nmax-length: 100\nmax-length-crop: false\ntsv: false\ntsv-fields: 0\nshuffle: data\n"
      "no-shuffle: false\nshuffle-in-ram: false\ndata-threads: 8\nall-caps-every: 0\nenglish-title-case-every: 0\n"
      "mini-batch: 1000\nmini-batch-words: 0\nmini-batch-fit: true\nmini-batch-fit-step: 10\n"
      "gradient-checkpointing: false\nmaxi-batch: 1000\nmaxi-batch-sort: trg\nshuffle-batches: false\n"
      "mini-batch-round-up: true\noptimizer: adam\noptimizer-params:\n  - 0.9\n  - 0.98\n"
      "  - 1e-09\noptimizer-delay: 1\nsync-sgd: true\nlearn-rate: 0.0003\nlr-report: true\nlr-decay: 0\n"
      "lr-decay-strategy: epoch+stalled\nlr-decay-start:\n  - 10\n  - 1\nlr-decay-freq: 50000\n"
      "lr-decay-reset-optimizer: false\nlr-decay-repeat-warmup: false\nlr-decay-inv-sqrt:\n  - 16000\n"
      "lr-warmup: 16000\nlr-warmup-start-rate: 0\nlr-warmup-cycle: false\nlr-warmup-at-reload: false\n"
      "label-smoothing: 0.1\nfactor-weight: 1\nclip-norm: 5\nexponential-smoothing: 0.0001\n"
      "guided-alignment: none\ndata-weighting: \"\"\nembedding-vectors:\n  []\nvalid-sets:\n  - data/valid.bpe.en\n"
      "  - data/valid.bpe.de\nvalid-freq: 5000\nvalid-metrics:\n  - ce-mean-words\n  - perplexity\n  - translation\n"
      "valid-reset-stalled: false\nearly-stopping: 10\nearly-stopping-epsilon:\n  - 0\nearly-stopping-on: first\n"
      "beam-size: 6\nnormalize: 0.6\nmax-length-factor: 3\nword-penalty: 0\nallow-unk: false\nn-best: false\n"
      "word-scores: false\nvalid-mini-batch: 64\nvalid-max-length: 1000\n"
      "valid-script-path: bash ./scripts/validate.sh\nvalid-script-args:\n  []\n"
      "valid-translation-output: data/valid.bpe.en.output\nkeep-best: false\nvalid-log: model/valid.log\n"
      "cpu-threads: 0\ndevices:\n  - 0\nversion: v1.12.0 65bf82ff 2023-02-21 20:56:31 -0800\n";
  std::string yml = temp("marian-model.npz.yml");
  write(yml, marianYml);
  Options o = parse({"-c", yml, "--cpu-threads", "2", "--valid-sets", temp("a.src"), temp("a.trg")});
  EXPECT_EQ(o.get<int>("enc-depth"), 6);
  EXPECT_EQ(o.get<std::string>("valid-script-path"), "bash ./scripts/validate.sh");
  EXPECT_EQ(o.get<std::vector<std::string>>("valid-metrics")[2], "translation");
  EXPECT_FLOAT_EQ(o.get<float>("exponential-smoothing"), 0.0001f);
  EXPECT_TRUE(o.get<bool>("tied-embeddings-all"));
  EXPECT_EQ(o.get<std::string>("lr-warmup"), "16000");
  EXPECT_TRUE(o.get<bool>("mini-batch-fit"));  // the recipe's batching takes effect
  EXPECT_EQ(o.get<int>("mini-batch-fit-step"), 10);
  // a feature that changes the model, set: refused, naming it
  EXPECT_FALSE(o.get<bool>("right-left"));  // Marian's written right-left: false, taken
  write(temp("omit-bias.yml"), marianYml + "output-omit-bias: true\n");
  EXPECT_NE(errorOf({"-c", temp("omit-bias.yml")}).find("'output-omit-bias: true'"), std::string::npos)
      << errorOf({"-c", temp("omit-bias.yml")});
  // in a user's own config an option neither program has stays an error
  write(temp("user.yml"), "enc-depth: 2\ncheck-nans: false\n");
  EXPECT_NE(errorOf({"-c", temp("user.yml")}).find("Unknown option 'check-nans'"), std::string::npos);
}

// The model.npz.yml real Marian v1.12.43 wrote for examples/multi30k/train.yml (all of its 220
// keys, no version key) and for its s2s variant train here with -c: every key accepted, the
// shared ones in effect.
TEST(Options, RealMarianModelConfigTrainsHere) {
  Options o = parse({"-c", MARIAN_SOURCE_DIR "/tests/data/marian-v1.12.43-transformer.npz.yml", "--valid-sets",
                     temp("a.src"), temp("a.trg")});
  EXPECT_EQ(o.get<std::string>("type"), "transformer");
  EXPECT_EQ(o.get<int>("dim-emb"), 256);
  EXPECT_EQ(o.get<int>("transformer-heads"), 4);
  EXPECT_TRUE(o.get<bool>("tied-embeddings-all"));
  EXPECT_EQ(o.get<std::string>("cost-type"), "ce-mean-words");
  EXPECT_EQ(o.get<std::string>("lr-warmup"), "500");
  EXPECT_EQ(o.get<std::vector<float>>("optimizer-params"), (std::vector<float>{0.9f, 0.98f, 1e-9f}));
  EXPECT_FLOAT_EQ(o.get<float>("label-smoothing"), 0.1f);
  EXPECT_EQ(o.get<std::vector<int>>("dim-vocabs"), (std::vector<int>{8000, 8000}));
  EXPECT_EQ(o.get<int>("seed"), 1111);
  Options s2s = parse({"-c", MARIAN_SOURCE_DIR "/tests/data/marian-v1.12.43-s2s.npz.yml", "--valid-sets", temp("a.src"),
                       temp("a.trg")});
  EXPECT_EQ(s2s.get<std::string>("type"), "s2s");
  EXPECT_EQ(s2s.get<int>("dim-rnn"), 256);
  EXPECT_EQ(s2s.get<int>("max-length"), 50);
}

// What this program writes as a configuration (model.npz.yml, --dump-config) real Marian v1.12's
// -c reads: with defaults it holds only keys Marian's own model.npz.yml has (or Marian's
// command-line flags --version and --no-shuffle, which its -c takes); an option of this
// program's own that asks for something stays, so that Marian's refusal names it.
TEST(Options, WrittenConfigHoldsOnlyMarianKeysWhileOursHaveDefaults) {
  const YAML::Node marian = YAML::LoadFile(MARIAN_SOURCE_DIR "/tests/data/marian-v1.12.43-transformer.npz.yml");
  const YAML::Node written = YAML::Load(parse({}).asYaml());
  ASSERT_TRUE(written.IsMap());
  EXPECT_GT(written.size(), 100u);
  for(auto it = written.begin(); it != written.end(); ++it) {
    std::string key = it->first.as<std::string>();
    if(key != "version" && key != "no-shuffle") {
      EXPECT_TRUE(marian[key].IsDefined()) << "'" << key << "' is not an option of Marian v1.12";
    }
  }
  std::string asks = parse({"--grad-dropping-rate", "0.99", "--tf32", "--bucket-size", "25.0"}).asYaml();
  EXPECT_NE(asks.find("\ngrad-dropping-rate: 0.99\n"), std::string::npos) << asks;
  EXPECT_NE(asks.find("\ntf32: true\n"), std::string::npos) << asks;
  EXPECT_EQ(asks.find("bucket-size"), std::string::npos) << asks;  // its default, spelt otherwise
  write(temp("written.yml"), asks);
  EXPECT_EQ(parse({"-c", temp("written.yml")}).asYaml(), asks);
}

// Marian's options this program lacks, in a user's config or on the command line: accepted with
// the value that asks for nothing (Marian's default, in any of YAML's spellings, or any value
// where none changes a result here), an error naming option and value when they ask for more.
TEST(Options, MarianOnlyOptionsAreAcceptedWhileTheyAskForNothing) {
  write(temp("inert.yml"),
        "check-nan: true\noutput-omit-bias: false\n"
        "exponential-smoothing-replace-freq: 0\nlogical-epoch: [1e, 0]\nsentencepiece-alphas: []\nsqlite: \"\"\n"
        "mini-batch-warmup: 0\nquiet-validation: true\n");
  Options o = parse({"-c", temp("inert.yml"), "--ignore-model-config=false", "--output-omit-bias=false",
                     "--embedding-fix-src=false"});
  EXPECT_FALSE(o.has("output-omit-bias"));  // nothing of them reaches the options
  for(const auto& [yaml, shown] : std::vector<std::pair<std::string, std::string>>{
          {"output-omit-bias: true\n", "'output-omit-bias: true'"},
          {"exponential-smoothing-replace-freq: 100\n", "'exponential-smoothing-replace-freq: 100'"},
          {"logical-epoch: [2e]\n", "'logical-epoch: [2e]'"},
          {"mini-batch-warmup: 1000\n", "'mini-batch-warmup: 1000'"}}) {
    write(temp("asks.yml"), yaml);
    std::string error = errorOf({"-c", temp("asks.yml")});
    EXPECT_NE(error.find(shown), std::string::npos) << error;
    EXPECT_NE(error.find("not implemented"), std::string::npos) << error;
  }
  EXPECT_NE(errorOf({"--all-caps-every", "2"}).find("'all-caps-every: 2'"), std::string::npos)
      << errorOf({"--all-caps-every", "2"});
  EXPECT_NE(errorOf({"--sentencepiece-alphas", "0.1", "0.2"}).find("on the command line"), std::string::npos);
  // the decoder's side: --optimize (intgemm) only off
  const char* optimize[] = {"marian-decoder", "--optimize"};
  try {
    parseOptions(2, optimize, ProgramMode::translation);
    ADD_FAILURE() << "--optimize was accepted";
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'optimize: true'"), std::string::npos) << e.what();
  }
  const char* inert[] = {"marian-decoder", "--no-spm-decode=false", "--stat-freq", "100u", "--model-mmap"};
  EXPECT_NO_THROW(parseOptions(5, inert, ProgramMode::translation));
  const char* pieces[] = {"marian-decoder", "--no-spm-decode"};  // the decoder's own option here
  EXPECT_TRUE(parseOptions(2, pieces, ProgramMode::translation).options.get<bool>("no-spm-decode"));
  EXPECT_NE(errorOf({"--no-spm-encode"}).find("'no-spm-encode: true'"), std::string::npos);  // training: not done
}

// A model.npz.yml Marian wrote (its version key) may hold a --task (a preset here, the file's
// options winning) and "interpolate-env-vars: true" (Marian interpolated its paths before writing
// them). An option neither program has is taken for another Marian version's there, and said (a
// user's copy may hold a misspelt one).
TEST(Options, MarianWrittenFilesAreReadAndUnknownKeysSaid) {
  const std::string version = "version: v1.12.0 65bf82ff 2023-02-21 20:56:31 -0800\n";
  write(temp("aliased.yml"), version + "task: [transformer-base]\ninterpolate-env-vars: true\ndim-emb: 128\n"
                                       "learn-rat: 0.5\n");
  ParsedOptions p = parsed({"-c", temp("aliased.yml")});
  EXPECT_EQ(p.options.get<int>("dim-emb"), 128);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("options neither this program nor Marian v1.12 has, taken for another Marian "
                               "version's and ignored: learn-rat"),
            std::string::npos)
      << p.warnings[0];
  // Marian removes its aliases before it writes: best-deep (the BiDeep RNN, not built here) is refused
  write(temp("deep.yml"), version + "best-deep: true\n");
  EXPECT_NE(errorOf({"-c", temp("deep.yml")}).find("'best-deep: true'"), std::string::npos);
  write(temp("plain.yml"), version + "dim-emb: 128\n");
  EXPECT_TRUE(parsed({"-c", temp("plain.yml")}).warnings.empty());
  // a model.npz.yml has no version key (Marian removes it); all of Marian's options say who wrote
  // it: one of Marian v1.11 (its num-devices) with interpolate-env-vars reads here
  std::ifstream in(MARIAN_SOURCE_DIR "/tests/data/marian-v1.12.43-transformer.npz.yml");
  std::string v112((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  v112.replace(v112.find("interpolate-env-vars: false"), 27, "interpolate-env-vars: true");
  write(temp("v111.yml"), v112 + "\nnum-devices: 0\n");  // (the file ends without a newline)
  ParsedOptions v111 = parsed({"-c", temp("v111.yml"), "--valid-sets", temp("a.src"), temp("a.trg")});
  EXPECT_EQ(v111.options.get<int>("dim-emb"), 256);
  ASSERT_EQ(v111.warnings.size(), 1u);
  EXPECT_NE(v111.warnings[0].find("ignored: num-devices"), std::string::npos) << v111.warnings[0];
}

// Marian's --dump-config takes full (the bare option's), minimal (what the files and the
// command line set) and expand (minimal with the aliases expanded; here there are none).
TEST(Options, DumpConfigTakesMariansModes) {
  write(temp("dump.yml"), "enc-depth: 2\n");
  std::string full = parsed({"-c", temp("dump.yml"), "--dim-emb", "96", "--dump-config"}).print;
  // a bare list option after one with values: the last wins, as for every option
  EXPECT_EQ(parse({"--cost-scaling", "2", "5", "--cost-scaling"}).get<std::vector<std::string>>("cost-scaling").size(),
            4u);
  EXPECT_EQ(parsed({"-c", temp("dump.yml"), "--dim-emb", "96", "--dump-config", "full"}).print, full);
  EXPECT_NE(full.find("\nlearn-rate: 0.0001\n"), std::string::npos) << full;
  ParsedOptions minimal = parsed({"-c", temp("dump.yml"), "--dim-emb", "96", "--dump-config", "minimal"});
  EXPECT_TRUE(minimal.exitNow);
  // the corpus (on the command line), enc-depth (the file) and dim-emb, nothing else
  const YAML::Node dumped = YAML::Load(minimal.print);
  EXPECT_EQ(dumped.size(), 3u) << minimal.print;
  EXPECT_EQ(dumped["enc-depth"].as<int>(), 2);
  EXPECT_EQ(dumped["dim-emb"].as<int>(), 96);
  EXPECT_TRUE(dumped["train-sets"].IsSequence());
  EXPECT_EQ(parsed({"-c", temp("dump.yml"), "--dim-emb", "96", "--dump-config=expand"}).print, minimal.print);
  EXPECT_FALSE(parsed({"--dump-config", "false"}).exitNow);
  EXPECT_NE(errorOf({"--dump-config", "short"}).find("short"), std::string::npos);
}

// A bare --cost-scaling is Marian's: its implicit 8 10000 1 8.
TEST(Options, BareCostScalingTakesMariansValues) {
  EXPECT_EQ(parse({"--cost-scaling"}).get<std::vector<std::string>>("cost-scaling"),
            (std::vector<std::string>{"8", "10000", "1", "8"}));
  EXPECT_EQ(parse({"--cost-scaling", "--dim-emb", "96"}).get<std::vector<std::string>>("cost-scaling").size(), 4u);
  EXPECT_EQ(parse({"--cost-scaling", "2", "5"}).get<std::vector<std::string>>("cost-scaling"),
            (std::vector<std::string>{"2", "5"}));
  EXPECT_TRUE(parse({}).get<std::vector<std::string>>("cost-scaling").empty());
}

// devices in a config file train on the CPU here unless cpu-threads is 0 (Marian's default is 0):
// said where the file leaves cpu-threads to this program's default; a file that sets both (as
// Marian's model.npz.yml) says what it means.
TEST(Options, DevicesOfAConfigFileOnTheCpuAreSaid) {
  write(temp("devices.yml"), "devices: [0, 1]\n");
  std::vector<std::string> warnings = parsed({"-c", temp("devices.yml")}).warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--devices 0 1 is not used: --cpu-threads 1 runs on 1 CPU device(s)"), std::string::npos)
      << warnings[0];
  write(temp("both.yml"), "devices: [0, 1]\ncpu-threads: 2\n");
  EXPECT_TRUE(parsed({"-c", temp("both.yml")}).warnings.empty());
  EXPECT_TRUE(parsed({"-c", temp("devices.yml"), "--cpu-threads", "0"}).warnings.empty());
}

// relative-paths: true in a config file (Marian's): its paths made absolute from the file's
// folder as it is read, the key not kept, so the configuration written from them (model.npz.yml,
// --dump-config) reads the same from any folder. Another file's paths and the command line's
// stay as given.
TEST(Options, RelativePathsOfAFileAreMadeAbsolute) {
  namespace fs = std::filesystem;
  std::string dir = temp("relabs");
  fs::create_directories(dir + "/exp");
  write(dir + "/c.src", "a\n");
  write(dir + "/c.trg", "b\n");
  write(dir + "/exp/train.yml", "relative-paths: true\ntrain-sets: [../c.src, ../c.trg]\nmodel: model/model.npz\n");
  write(dir + "/exp/other.yml", "valid-log: v.log\n");
  // the config named from the working folder by a relative path, as "marian -c exp/train.yml"
  std::string relative = fs::relative(dir + "/exp/train.yml").string();
  ASSERT_FALSE(fs::path(relative).is_absolute());
  std::string other = dir + "/exp/other.yml";
  const char* argv[] = {"marian", "-c", relative.c_str(), other.c_str(), "--log", "t.log"};
  Options o = parseOptions(6, argv, ProgramMode::training).options;
  std::string abs = fs::absolute(dir).lexically_normal().string();
  EXPECT_EQ(o.get<std::vector<std::string>>("train-sets"), (std::vector<std::string>{abs + "/c.src", abs + "/c.trg"}));
  EXPECT_EQ(o.get<std::string>("model"), abs + "/exp/model/model.npz");
  EXPECT_EQ(o.get<std::string>("valid-log"), "v.log");  // the other file has no relative-paths
  EXPECT_EQ(o.get<std::string>("log"), "t.log");
  EXPECT_FALSE(o.get<bool>("relative-paths"));
  std::string written = o.asYaml();
  EXPECT_NE(written.find("\nrelative-paths: false\n"), std::string::npos) << written;
  write(dir + "/exp/written.yml", written);
  std::string again = dir + "/exp/written.yml";
  const char* reread[] = {"marian", "-c", again.c_str()};
  Options r = parseOptions(3, reread, ProgramMode::training).options;
  EXPECT_EQ(r.get<std::string>("model"), abs + "/exp/model/model.npz");
  EXPECT_EQ(r.get<std::vector<std::string>>("train-sets"), o.get<std::vector<std::string>>("train-sets"));
  // given on the command line (MODEL.decoder.yml relative to the model), it stays in what is
  // written, its paths absolute, so that the YAML read again finds the same files
  std::string cwdRelative = fs::relative(dir + "/c.src").string();
  const char* flagged[] = {"marian", "--relative-paths", "-t", cwdRelative.c_str(), cwdRelative.c_str(), "-m", "m.npz"};
  Options given = parseOptions(7, flagged, ProgramMode::training).options;
  std::string keeps = given.asYaml();
  EXPECT_NE(keeps.find("\nrelative-paths: true\n"), std::string::npos) << keeps;
  EXPECT_EQ(given.get<std::string>("model"), "m.npz");  // written absolute, held as given
  write(dir + "/exp/keeps.yml", keeps);
  std::string keepsYml = dir + "/exp/keeps.yml";
  const char* readKeeps[] = {"marian", "-c", keepsYml.c_str()};
  Options k = parseOptions(3, readKeeps, ProgramMode::training).options;
  EXPECT_EQ(k.get<std::vector<std::string>>("train-sets"), (std::vector<std::string>{abs + "/c.src", abs + "/c.src"}));
  EXPECT_EQ(k.get<std::string>("model"), fs::absolute("m.npz").lexically_normal().string());
}

// Marian's tools read a model by its name's format: a --model not ending in .npz (Marian's .bin)
// is refused before training writes one.
TEST(Options, AModelNotNamedNpzIsRefused) {
  EXPECT_NE(errorOf({"--model", temp("model.bin")}).find("Marian's .bin format is not implemented"), std::string::npos)
      << errorOf({"--model", temp("model.bin")});
  EXPECT_EQ(errorOf({"--model", temp("model.npz")}), "");
}

// Marian's --task presets set its options; an option given on the command line wins over them, and
// one in a config file wins over a preset from a config file (not over one on the command line).
TEST(Options, TaskPresetsSetMariansOptions) {
  Options base = parse({"--task", "transformer-base"});
  EXPECT_EQ(base.get<int>("dim-emb"), 512);
  EXPECT_EQ(base.get<int>("transformer-heads"), 8);
  EXPECT_EQ(base.get<int>("transformer-dim-ffn"), 2048);
  EXPECT_FLOAT_EQ(base.get<float>("learn-rate"), 0.0003f);
  EXPECT_EQ(base.get<std::string>("lr-warmup"), "16000");
  EXPECT_EQ(base.get<std::vector<std::string>>("lr-decay-inv-sqrt"), (std::vector<std::string>{"16000"}));
  EXPECT_EQ(base.get<std::vector<float>>("optimizer-params"), (std::vector<float>{0.9f, 0.98f, 1e-9f}));
  EXPECT_EQ(base.get<std::string>("transformer-postprocess"), "dan");
  EXPECT_EQ(base.get<std::string>("transformer-ffn-activation"), "relu");
  EXPECT_TRUE(base.get<bool>("sync-sgd"));
  EXPECT_TRUE(base.get<bool>("mini-batch-fit"));
  EXPECT_EQ(base.get<int>("workspace"), 9500);
  EXPECT_EQ(base.get<int>("beam-size"), 8);
  EXPECT_EQ(base.get<int>("valid-mini-batch"), 16);
  EXPECT_FALSE(base.has("task"));  // what it set is written instead, as Marian's model.npz.yml
  Options big = parse({"--task", "transformer-big-prenorm", "--dim-emb", "256"});
  EXPECT_EQ(big.get<int>("dim-emb"), 256);
  EXPECT_EQ(big.get<int>("transformer-heads"), 16);
  EXPECT_EQ(big.get<std::vector<float>>("optimizer-params"), (std::vector<float>{0.9f, 0.998f, 1e-9f}));
  EXPECT_EQ(big.get<std::string>("transformer-preprocess"), "n");
  EXPECT_EQ(big.get<std::string>("transformer-postprocess"), "da");
  EXPECT_EQ(big.get<std::string>("transformer-postprocess-top"), "n");
  write(temp("task.yml"), "task: [transformer-base]\ndim-emb: 128\n");
  EXPECT_EQ(parse({"-c", temp("task.yml")}).get<int>("dim-emb"), 128);
  EXPECT_EQ(parse({"-c", temp("task.yml")}).get<int>("transformer-heads"), 8);
  write(temp("dim.yml"), "dim-emb: 128\n");
  EXPECT_EQ(parse({"-c", temp("dim.yml"), "--task", "transformer-base"}).get<int>("dim-emb"), 512);
  EXPECT_NE(errorOf({"--task", "transformer-huge"}).find("transformer-huge"), std::string::npos);
  // --dump-config expand writes what the preset set; minimal what was given
  const YAML::Node expanded = YAML::Load(parsed({"--task", "transformer-base", "--dump-config", "expand"}).print);
  EXPECT_EQ(expanded["dim-emb"].as<int>(), 512);
  EXPECT_FALSE(expanded["task"].IsDefined());
  const YAML::Node minimal = YAML::Load(parsed({"--task", "transformer-base", "--dump-config", "minimal"}).print);
  EXPECT_FALSE(minimal["dim-emb"].IsDefined());
  EXPECT_EQ(minimal["task"].as<std::vector<std::string>>(), (std::vector<std::string>{"transformer-base"}));
  // two presets: the first in Marian's order keeps what both set (its updateConfig's priorities)
  EXPECT_EQ(parse({"--task", "transformer-big", "transformer-base"}).get<int>("dim-emb"), 512);
}

}  // namespace
}  // namespace marian
