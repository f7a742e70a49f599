#include "common/options.h"

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace marian {

namespace po = boost::program_options;

// ---------------------------------------------------------------------------------------------
// The options this program knows, with Marian's names, defaults and meanings.

namespace {

enum class Kind { Flag, Int, Float, String, Strings, Ints, Floats };
enum Modes { kTrain = 1, kTranslate = 2, kBoth = 3 };

struct Spec {
  const char* name;
  const char* shortName;  // "" when none
  Kind kind;
  const char* defaultYaml;  // "" = no default (absent unless given)
  int modes;
  const char* help;
  const char* implicitValue = "";  // value when given without one (--exponential-smoothing)
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      // general
      {"config", "c", Kind::Strings, "", kBoth, "YAML configuration files; later ones win"},
      {"dump-config", "", Kind::Flag, "", kBoth, "Print the effective configuration as YAML and exit"},
      {"seed", "", Kind::Int, "0", kBoth, "Random seed; 0 draws one"},
      {"workspace", "w", Kind::Int, "2048", kBoth, "Workspace per device in MB (activations)"},
      {"log", "", Kind::String, "\"\"", kBoth, "Also write the log to this file"},
      {"quiet", "", Kind::Flag, "false", kBoth, "Suppress logging to stderr"},
      {"devices", "d", Kind::Strings, "[\"0\"]", kBoth, "GPU ids to use"},
      {"cpu-threads", "", Kind::Int, "1", kBoth, "Number of CPU devices (0: use --devices GPUs)"},
      {"mini-batch", "", Kind::Int, "64", kBoth, "Sentences per mini-batch"},
      {"maxi-batch", "", Kind::Int, "100", kBoth, "Mini-batches read ahead and sorted by length"},
      {"maxi-batch-sort", "", Kind::String, "trg", kBoth, "Sort maxi-batches by: none, src, trg"},
      {"max-length", "", Kind::Int, "50", kBoth, "Skip sentences longer than this (tokens)"},
      {"vocabs", "v", Kind::Strings, "", kBoth, "Vocabulary files (.spm, .yml); created if missing"},
      {"dim-vocabs", "", Kind::Ints, "[0, 0]", kBoth, "Vocabulary sizes; 0: all words"},
      // translation (marian-decoder) and validation by translation
      {"models", "m", Kind::Strings, "", kTranslate, "Model file to translate with (its configuration MODEL.yml beside it)"},
      {"input", "i", Kind::Strings, "[stdin]", kTranslate, "Input file (plain or .gz); stdin by default"},
      {"output", "o", Kind::String, "stdout", kTranslate, "Output file; stdout by default"},
      {"n-best", "", Kind::Flag, "false", kTranslate, "Print the n-best list: id ||| translation ||| F0= score ||| normalized score"},
      {"beam-size", "b", Kind::Int, "12", kBoth, "Beam size (1: greedy)"},
      {"normalize", "n", Kind::Float, "0", kBoth, "Divide scores by length^N", "1"},
      {"word-penalty", "", Kind::Float, "0", kBoth, "Subtract N per word from the score"},
      {"max-length-factor", "", Kind::Float, "3", kBoth, "Translations are at most N times the source length"},
      // model
      {"model", "m", Kind::String, "model.npz", kTrain, "Path to the model file"},
      {"type", "", Kind::String, "transformer", kTrain, "Model type: transformer, s2s"},
      {"dim-emb", "", Kind::Int, "512", kTrain, "Embedding size"},
      {"dim-rnn", "", Kind::Int, "1024", kTrain, "RNN state size (s2s)"},
      {"enc-depth", "", Kind::Int, "1", kTrain, "Encoder layers"},
      {"dec-depth", "", Kind::Int, "1", kTrain, "Decoder layers"},
      {"enc-cell", "", Kind::String, "gru", kTrain, "Encoder RNN cell (s2s): gru"},
      {"dec-cell", "", Kind::String, "gru", kTrain, "Decoder RNN cell (s2s): gru"},
      {"transformer-heads", "", Kind::Int, "8", kTrain, "Attention heads"},
      {"transformer-dim-ffn", "", Kind::Int, "2048", kTrain, "Feed-forward inner size"},
      {"transformer-ffn-activation", "", Kind::String, "swish", kTrain, "Feed-forward activation: swish, relu"},
      {"transformer-preprocess", "", Kind::String, "\"\"", kTrain, "Ops before each block: d(ropout) a(dd) n(orm)"},
      {"transformer-postprocess", "", Kind::String, "dan", kTrain, "Ops after each block"},
      {"transformer-postprocess-emb", "", Kind::String, "d", kTrain, "Ops after the embeddings"},
      {"transformer-dropout", "", Kind::Float, "0", kTrain, "Dropout between transformer blocks"},
      {"transformer-dropout-attention", "", Kind::Float, "0", kTrain, "Dropout on attention weights"},
      {"transformer-dropout-ffn", "", Kind::Float, "0", kTrain, "Dropout inside the feed-forward block"},
      {"tied-embeddings", "", Kind::Flag, "false", kTrain, "Tie target embeddings and output layer"},
      {"tied-embeddings-src", "", Kind::Flag, "false", kTrain, "Tie source and target embeddings"},
      {"tied-embeddings-all", "", Kind::Flag, "false", kTrain, "Tie all embeddings and the output layer"},
      {"layer-normalization", "", Kind::Flag, "false", kTrain, "Layer normalisation in the RNN (s2s)"},
      {"dropout-rnn", "", Kind::Float, "0", kTrain, "Dropout on RNN states (s2s)"},
      {"dropout-src", "", Kind::Float, "0", kTrain, "Drop source words (s2s)"},
      {"dropout-trg", "", Kind::Float, "0", kTrain, "Drop target words (s2s)"},
      {"label-smoothing", "", Kind::Float, "0", kTrain, "Label smoothing epsilon"},
      {"cost-type", "", Kind::String, "ce-sum", kTrain, "Training cost: ce-sum, ce-mean, ce-mean-words"},
      // data
      {"train-sets", "t", Kind::Strings, "", kTrain, "Parallel training corpus (plain text or .gz)"},
      {"mini-batch-words", "", Kind::Int, "0", kTrain, "Target words per mini-batch (overrides --mini-batch)"},
      {"shuffle", "", Kind::String, "data", kTrain, "Shuffle: data, batches, none"},
      {"no-shuffle", "", Kind::Flag, "false", kTrain, "Do not shuffle (same as --shuffle none)"},
      // optimizer
      {"optimizer", "o", Kind::String, "adam", kTrain, "Optimizer: sgd, adagrad, adam"},
      {"optimizer-params", "", Kind::Floats, "[]", kTrain, "adam: beta1 beta2 eps; adagrad: eps"},
      {"optimizer-delay", "", Kind::Float, "1", kTrain, "Mini-batches per update (gradients summed; Marian's meaning); whole numbers >= 1"},
      {"learn-rate", "l", Kind::Float, "0.0001", kTrain, "Learning rate"},
      {"lr-warmup", "", Kind::String, "0", kTrain, "Linear warm-up over this many updates (u) or labels (t)"},
      {"lr-decay-inv-sqrt", "", Kind::Strings, "[\"0\"]", kTrain, "Decay by 1/sqrt(update) after this many updates"},
      {"lr-report", "", Kind::Flag, "false", kTrain, "Report the learning rate (always shown)"},
      {"clip-norm", "", Kind::Float, "1", kTrain, "Clip the gradient to this L2 norm; 0: off"},
      {"exponential-smoothing", "", Kind::Float, "0", kTrain, "Keep an exponential moving average of the parameters", "0.0001"},
      {"sync-sgd", "", Kind::Flag, "false", kTrain, "Synchronous SGD across devices (and, under mpirun, across ranks by allreduce)"},
      // synchronous SGD across MPI ranks (seeds 000-003)
      {"sparse-allreduce", "", Kind::String, "dense", kTrain, "Allreduce across ranks: dense, ring, tree, topka, ssar-recdbl, ssar-split, dsar-split, gtopk, oktopk"},
      {"compression-density", "", Kind::Float, "1", kTrain, "Send this fraction of each rank's gradient (top-k with residuals); 1: all"},
      {"topk-selection", "", Kind::String, "sampled", kTrain, "How the top-k threshold is found: exact, sampled, reuse"},
      {"topk-reuse-every", "", Kind::Int, "32", kTrain, "reuse (and oktopk's global threshold): recompute the exact threshold every N updates"},
      {"bucket-size", "", Kind::Float, "25", kTrain, "MB of gradients per allreduce bucket, started while backward goes on; 0: one allreduce after backward"},
      {"oktopk-repartition-every", "", Kind::Int, "64", kTrain, "oktopk: recompute the balanced region boundaries every N updates"},
      // multi-node parameter server (seed 004)
      {"multi-node", "", Kind::Flag, "false", kTrain, "Sharded parameter server across MPI ranks (mpirun -np N)"},
      {"multi-node-overlap", "", Kind::Flag, "false", kTrain, "Overlap communication with computation (double buffers)"},
      {"multi-node-max-delay", "", Kind::Int, "0", kTrain, "With overlap: at most this many compute steps between synchronisations; 0: unbounded"},
      {"multi-node-apply-summed", "", Kind::Flag, "false", kTrain, "With overlap: apply the locally summed gradients (SGD step) to swapped-in parameters"},
      {"multi-node-single-client", "", Kind::Flag, "false", kTrain, "One client of a node communicates at a time"},
      {"multi-node-local-optimizer", "", Kind::Flag, "false", kTrain, "Clients also update their own parameters between synchronisations"},
      {"multi-node-timeout", "", Kind::Int, "60", kTrain, "Seconds to wait for another rank before stopping the job"},
      {"grad-dropping-rate", "", Kind::Float, "0", kTrain, "Drop this fraction of gradients (and deltas), keeping residuals; 0: dense"},
      {"grad-dropping-warmup", "", Kind::Int, "0", kTrain, "Exchanges over which the kept fraction falls from 1 to 1 - rate"},
      // schedule
      {"after-epochs", "e", Kind::Int, "0", kTrain, "Stop after this many epochs; 0: no limit"},
      {"after-batches", "", Kind::Int, "0", kTrain, "Stop after this many updates; 0: no limit"},
      {"sigterm", "", Kind::String, "save-and-exit", kTrain, "On SIGTERM: save-and-exit (finish the update, save, stop) or exit-immediately"},
      {"after", "a", Kind::String, "0e", kTrain, "Stop after this many epochs (e), updates (u) or labels (t)"},
      {"disp-freq", "", Kind::String, "1000u", kTrain, "Display training statistics every N updates (u), labels (t) or epochs (e)"},
      {"disp-first", "", Kind::Int, "0", kTrain, "Also display the first N updates"},
      {"save-freq", "", Kind::String, "10000u", kTrain, "Save a checkpoint every N updates (u/t/e)"},
      {"valid-freq", "", Kind::String, "10000u", kTrain, "Validate every N updates (u/t/e)"},
      {"valid-sets", "", Kind::Strings, "", kTrain, "Parallel validation corpus"},
      {"valid-metrics", "", Kind::Strings, "[cross-entropy]", kTrain, "cross-entropy, ce-mean-words, perplexity, bleu, translation"},
      {"valid-translation-output", "", Kind::String, "\"\"", kTrain, "Write the validation translations to this file"},
      {"valid-mini-batch", "", Kind::Int, "32", kTrain, "Sentences per validation batch"},
      {"valid-max-length", "", Kind::Int, "1000", kTrain, "Longer validation sentences are cropped"},
      {"early-stopping", "", Kind::Int, "10", kTrain, "Stop when the first metric stalled this many times"},
      {"keep-best", "", Kind::Flag, "false", kTrain, "Keep the best model per metric (model.npz.best-METRIC.npz)"},
      {"overwrite", "", Kind::Flag, "false", kTrain, "Do not keep model.iter{N}.npz checkpoints"},
      {"timeline", "", Kind::String, "\"\"", kTrain, "Write a Chrome trace of forward, backward, sync, update, send and receive per thread (ranks > 0: FILE.rankN)"},
  };
  return all;
}

const Spec* findSpec(const std::string& name) {
  for(const Spec& s : specs())
    if(name == s.name)
      return &s;
  return nullptr;
}

const char* kindName(Kind k) {
  switch(k) {
    case Kind::Flag: return "a boolean";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a number";
    case Kind::String: return "a string";
    case Kind::Strings: return "a list of strings";
    case Kind::Ints: return "a list of integers";
    case Kind::Floats: return "a list of numbers";
  }
  return "";
}

bool scalarConverts(const YAML::Node& v, Kind k) {
  if(!v.IsScalar())
    return false;
  try {
    switch(k) {
      case Kind::Flag: v.as<bool>(); break;
      case Kind::Int: case Kind::Ints: v.as<long long>(); break;
      case Kind::Float: case Kind::Floats: v.as<double>(); break;
      default: break;
    }
  } catch(const YAML::Exception&) {
    return false;
  }
  return true;
}

// Checks a value against its option's kind; a scalar given for a list becomes a 1-element list.
YAML::Node typed(const Spec& spec, const YAML::Node& value, const std::string& where) {
  bool list = spec.kind == Kind::Strings || spec.kind == Kind::Ints || spec.kind == Kind::Floats;
  auto fail = [&](const std::string& shown) {
    ABORT("Option '{}'{}: value '{}' is not {}", spec.name, where, shown, kindName(spec.kind));
  };
  if(list) {
    YAML::Node seq(YAML::NodeType::Sequence);
    if(value.IsNull())
      return seq;
    if(value.IsScalar()) {
      seq.push_back(value);
    } else if(value.IsSequence()) {
      seq = YAML::Clone(value);
    } else {
      fail(YAML::Dump(value));
    }
    for(const YAML::Node& item : seq)
      if(!scalarConverts(item, spec.kind))
        fail(YAML::Dump(value));
    return seq;
  }
  if(!scalarConverts(value, spec.kind))
    fail(value.IsScalar() ? value.Scalar() : YAML::Dump(value));
  return YAML::Clone(value);
}

YAML::Node fromCommandLine(const Spec& spec, const std::vector<std::string>& values) {
  if(spec.kind == Kind::Strings || spec.kind == Kind::Ints || spec.kind == Kind::Floats) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for(const std::string& s : values)
      seq.push_back(YAML::Node(s));
    return typed(spec, seq, " on the command line");
  }
  // given without a value: a flag is true, an option with an implicit value takes it
  std::string value = !values.empty() ? values.back() : *spec.implicitValue ? spec.implicitValue : "true";
  return typed(spec, YAML::Node(value), " on the command line");
}

std::string helpText(const po::options_description& desc) {
  std::ostringstream out;
  out << "Usage: marian [options]\n" << desc;
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Options::Options() : node_(std::make_shared<YAML::Node>(YAML::NodeType::Map)) {}
Options::Options(const YAML::Node& node) : node_(std::make_shared<YAML::Node>(YAML::Clone(node))) {}

bool Options::has(const std::string& key) const { return (*node_)[key].IsDefined() && !(*node_)[key].IsNull(); }

template <class T>
T Options::get(const std::string& key) const {
  YAML::Node v = (*node_)[key];
  ABORT_IF(!v.IsDefined() || v.IsNull(), "Option '{}' is required but not set", key);
  try {
    return v.as<T>();
  } catch(const YAML::Exception&) {
    ABORT("Option '{}' has value '{}' of the wrong type", key, YAML::Dump(v));
  }
}

#define MARIAN_OPTION_TYPE(T) template T Options::get<T>(const std::string&) const;
MARIAN_OPTION_TYPE(bool)
MARIAN_OPTION_TYPE(int)
MARIAN_OPTION_TYPE(size_t)
MARIAN_OPTION_TYPE(float)
MARIAN_OPTION_TYPE(double)
MARIAN_OPTION_TYPE(std::string)
MARIAN_OPTION_TYPE(std::vector<int>)
MARIAN_OPTION_TYPE(std::vector<float>)
MARIAN_OPTION_TYPE(std::vector<std::string>)
#undef MARIAN_OPTION_TYPE

std::string Options::asYaml() const {
  std::map<std::string, YAML::Node> sorted;
  for(auto it = node_->begin(); it != node_->end(); ++it)
    sorted[it->first.as<std::string>()] = it->second;
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(auto& [key, value] : sorted) {
    out << YAML::Key << key << YAML::Value;
    if(value.IsSequence())
      out << YAML::Flow;
    out << value;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ParsedOptions parseOptions(int argc, const char* const* argv, ProgramMode mode) {
  int modeBit = mode == ProgramMode::translation ? kTranslate : kTrain;
  po::options_description desc("Options");
  desc.add_options()("help,h", "Print this help and exit");
  std::set<std::string> implicitOptions;
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit))
      continue;
    std::string names = std::string(s.name) + (*s.shortName ? std::string(",") + s.shortName : "");
    std::string help = s.help + std::string(*s.defaultYaml ? " (default: " + std::string(s.defaultYaml) + ")" : "");
    if(s.kind == Kind::Flag) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value("true")->zero_tokens(), help.c_str());
    } else if(s.kind == Kind::Strings || s.kind == Kind::Ints || s.kind == Kind::Floats) {
      desc.add_options()(names.c_str(), po::value<std::vector<std::string>>()->multitoken(), help.c_str());
    } else if(*s.implicitValue) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value(s.implicitValue), help.c_str());
      implicitOptions.insert(std::string("--") + s.name);
    } else {
      desc.add_options()(names.c_str(), po::value<std::string>(), help.c_str());
    }
  }

  // "--exponential-smoothing 0.001" as Marian accepts it: join an optional value to its option.
  std::vector<std::string> args;
  for(int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if(implicitOptions.count(a) && i + 1 < argc && argv[i + 1][0] != '-')
      a += std::string("=") + argv[++i];
    args.push_back(a);
  }

  // The last occurrence of an option on the command line wins, as with config files.
  std::map<std::string, std::vector<std::string>> given;
  try {
    po::parsed_options parsed = po::command_line_parser(args).options(desc).run();
    for(const po::option& opt : parsed.options) {
      if(opt.unregistered || opt.position_key >= 0)
        ABORT("Unexpected argument '{}' on the command line (see --help)",
              opt.original_tokens.empty() ? opt.string_key : opt.original_tokens[0]);
      given[opt.string_key] = opt.value;
    }
  } catch(const po::unknown_option& e) {
    ABORT("Unknown option '{}' (see --help)", e.get_option_name());
  } catch(const po::too_many_positional_options_error&) {
    ABORT("Unexpected argument on the command line; options start with '--' (see --help)");
  } catch(const po::error& e) {
    ABORT("Command line: {}", e.what());
  }

  ParsedOptions result;
  if(given.count("help")) {
    result.exitNow = true;
    result.print = helpText(desc);
    return result;
  }

  // 1. defaults
  YAML::Node config(YAML::NodeType::Map);
  for(const Spec& s : specs())
    if((s.modes & modeBit) && *s.defaultYaml)
      config[s.name] = typed(s, YAML::Load(s.defaultYaml), " (default)");

  // 2. config files, in order
  std::vector<std::string> configFiles;
  if(given.count("config"))
    configFiles = given["config"];
  for(const std::string& file : configFiles) {
    ABORT_IF(!fileExists(file), "Config file '{}' (--config) does not exist", file);
    YAML::Node loaded;
    try {
      loaded = YAML::LoadFile(file);
    } catch(const YAML::Exception& e) {
      ABORT("Config file '{}' is not valid YAML: {}", file, e.what());
    }
    if(loaded.IsNull())
      continue;
    ABORT_IF(!loaded.IsMap(), "Config file '{}' must be a YAML map of option: value", file);
    for(auto it = loaded.begin(); it != loaded.end(); ++it) {
      std::string key = it->first.as<std::string>();
      const Spec* spec = findSpec(key);
      ABORT_IF(!spec || !(spec->modes & modeBit), "Unknown option '{}' in config file '{}'", key, file);
      if(key == "config" || key == "dump-config")
        continue;
      config[key] = typed(*spec, it->second, " in config file '" + file + "'");
    }
  }

  // 3. the command line
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit) || !given.count(s.name) || std::string(s.name) == "config")
      continue;
    config[s.name] = fromCommandLine(s, given[s.name]);
  }
  bool dump = config["dump-config"].IsDefined() && config["dump-config"].as<bool>();
  config.remove("dump-config");
  config.remove("config");

  result.options = Options(config);
  Options& opt = result.options;
  if(dump) {
    result.exitNow = true;
    result.print = opt.asYaml();
    return result;
  }

  // Files that must exist now (vocabularies may be created).
  if(mode == ProgramMode::training) {
    auto train = opt.get<std::vector<std::string>>("train-sets", {});
    ABORT_IF(train.size() != 2, "--train-sets needs a source and a target file, got {}", train.size());
    for(const std::string& f : train)
      ABORT_IF(!fileExists(f), "Training file '{}' (--train-sets) does not exist", f);
    for(const std::string& f : opt.get<std::vector<std::string>>("valid-sets", {}))
      ABORT_IF(!fileExists(f), "Validation file '{}' (--valid-sets) does not exist", f);
  }
  return result;
}

std::optional<Options> startProgram(int argc, const char* const* argv, ProgramMode mode) {
  ParsedOptions parsed = parseOptions(argc, argv, mode);
  if(parsed.exitNow) {
    std::fputs(parsed.print.c_str(), stdout);
    return std::nullopt;
  }
  logging::configure(parsed.options.get<std::string>("log", ""), parsed.options.get<bool>("quiet"));
  return parsed.options;
}

}  // namespace marian
