#include "common/options.h"

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <type_traits>
#include <sstream>

#include <unistd.h>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/marian_only_options.h"
#include "common/option_table.h"
#include "common/task_presets.h"

namespace marian {

namespace po = boost::program_options;

// ---------------------------------------------------------------------------------------------
// Parsing: the table's defaults, config files and the command line merged.

using namespace option_table;

namespace {

// A path option's value (a path or a list of them) with each relative path taken from `base`,
// made absolute (empty, stdin and stdout stay as they are).
YAML::Node absolutePaths(const YAML::Node& value, const std::filesystem::path& base) {
  auto resolve = [&](const YAML::Node& v) {
    std::string p = v.IsScalar() ? v.Scalar() : "";
    return p.empty() || p == "stdin" || p == "stdout" || std::filesystem::path(p).is_absolute()
               ? YAML::Node(v) : YAML::Node((base / p).lexically_normal().string());
  };
  if(!value.IsSequence())
    return resolve(value);
  YAML::Node seq(YAML::NodeType::Sequence);
  for(const YAML::Node& v : value)
    seq.push_back(resolve(v));
  return seq;
}

// Marian's "relative-paths: true" in a config file: the file's paths are relative to its folder.
// As Marian, they are made absolute and the key goes (it does not spread to other files), so a
// configuration written from them (model.npz.yml, --dump-config) reads the same from anywhere.
void resolvePathsOfFile(YAML::Node& loaded, const std::string& file) {
  std::filesystem::path base = std::filesystem::absolute(std::filesystem::path(file)).parent_path();
  for(const std::string& key : pathOptions())
    if(loaded[key].IsDefined())
      loaded[key] = absolutePaths(loaded[key], base);
  loaded.remove("relative-paths");
}

// Marian interpolates the environment's variables in its paths before it writes model.npz.yml
// (config_parser.cpp): there "interpolate-env-vars: true" asks for nothing more.
bool doneByMarian(const std::string& key) { return key == "interpolate-env-vars"; }

// One YAML configuration (a --config file, or the one embedded in a model) over what is already
// merged. Keys given twice are an error (YAML leaves the winner to the parser), as are wrong
// values and unknown keys; Marian's options this program lacks are accepted while they ask for
// nothing (common/marian_only_options.h). A configuration Marian wrote (modelFile) may also hold
// its writer's "version", interpolate-env-vars (done) and options of other Marian versions:
// ignored, the last named in `warnings` where given (a user's copy of such a file may hold a
// misspelt option); `file` names where it came from.
void mergeConfig(const std::string& text, const std::string& file, int modeBit, YAML::Node& config,
                 bool modelFile = false, std::map<std::string, std::string>* origin = nullptr,
                 std::vector<std::string>* warnings = nullptr) {
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch(const YAML::Exception& e) {
    ABORT("Config file '{}' is not valid YAML: {}", file, e.what());
  }
  if(loaded.IsNull())
    return;
  ABORT_IF(!loaded.IsMap(), "Config file '{}' must be a YAML map of option: value", file);
  std::map<std::string, int> lineOf;  // before relative-paths goes (a second one would escape this)
  for(auto it = loaded.begin(); it != loaded.end(); ++it) {
    int line = it->first.Mark().line + 1;
    ABORT_IF(!it->first.IsScalar(), "Config file '{}', line {}: a key must be an option name, not '{}'", file, line,
             YAML::Dump(it->first));
    std::string key = it->first.Scalar();
    ABORT_IF(lineOf.count(key), "Config file '{}': option '{}' is given twice (lines {} and {})", file, key,
             lineOf[key], line);
    lineOf[key] = line;
  }
  bool relative = false;
  if(loaded["relative-paths"].IsDefined() && YAML::convert<bool>::decode(loaded["relative-paths"], relative) &&
     relative)
    resolvePathsOfFile(loaded, file);
  std::string ignored, unknown;
  for(auto it = loaded.begin(); it != loaded.end(); ++it) {
    std::string key = it->first.Scalar();
    int line = lineOf[key];
    const Spec* spec = ownSpec(key, modeBit);
    std::string where = " in config file '" + file + "', line " + std::to_string(line);
    bool ours = spec != nullptr;
    // a model's "version" is the program that wrote it, not the --version flag
    if(modelFile && key == "version")
      continue;
    if(!ours && modelFile && doneByMarian(key)) {
      ignored += (ignored.empty() ? "" : ", ") + key;
      continue;
    }
    if(!ours && acceptMarianOnlyOption(key, it->second, where)) {
      ignored += (ignored.empty() ? "" : ", ") + key;
      continue;
    }
    if(!ours && modelFile) {  // an option of another Marian version, or of the other program
      std::string& list = findSpec(key, modeBit) ? ignored : unknown;  // the other program's, or none's
      list += (list.empty() ? "" : ", ") + key;
      continue;
    }
    ABORT_IF(!ours, "Unknown option '{}' in config file '{}', line {}", key, file, line);
    if(key == "config" || key == "dump-config")
      continue;
    config[key] = typed(*spec, it->second, where);
    if(origin)
      (*origin)[key] = file;
  }
  if(!ignored.empty())
    LOG(debug, "[config] {}: options of Marian's that ask for nothing here, ignored: {}", file, ignored);
  if(!unknown.empty() && warnings)
    warnings->push_back(format("Config file '{}' was written by Marian: options neither this program nor Marian "
                               "v1.12 has, taken for another Marian version's and ignored: {}",
                               file, unknown));
}

// Marian's own model.npz.yml carries "version: v1.12.0 65bf82ff 2023-02-21" (its program's
// version, where a user's config could only hold the --version flag) and all of its 220 options:
// such a file is read like a model's configuration.
bool writtenByMarian(const std::string& text) {
  try {
    YAML::Node n = YAML::Load(text);
    if(!n.IsMap() || !n["version"] || !n["version"].IsScalar())
      return false;
    std::string v = n["version"].Scalar();
    return v.size() > 1 && v[0] == 'v' && std::isdigit(static_cast<unsigned char>(v[1]));
  } catch(const YAML::Exception&) {
    return false;  // mergeConfig names the error
  }
}

std::string helpText(const po::options_description& desc, ProgramMode mode) {
  std::ostringstream out;
  out << (mode == ProgramMode::translation ? "Usage: marian-decoder [options]\n" : "Usage: marian [options]\n") << desc;
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Options::Options() : node_(std::make_shared<YAML::Node>(YAML::NodeType::Map)) {}
Options::Options(const YAML::Node& node) : node_(std::make_shared<YAML::Node>(YAML::Clone(node))) {}

Options Options::clone() const { return Options(*node_); }  // (the constructor clones)

bool Options::has(const std::string& key) const { return (*node_)[key].IsDefined() && !(*node_)[key].IsNull(); }

template <class T>
T Options::get(const std::string& key) const {
  YAML::Node v = (*node_)[key];
  if(!v.IsDefined() || v.IsNull())  // options built in code (tests, a model's YAML) omit defaults
    v = specDefault(key);
  ABORT_IF(!v.IsDefined() || v.IsNull(), "Option '{}' is required but not set", key);
  T value;
  try {
    value = v.as<T>();
  } catch(const YAML::Exception&) {
    ABORT("Option '{}' has value '{}' of the wrong type", key, YAML::Dump(v));
  }
  // options built in code (tests, a model's YAML) keep to the table too
  if constexpr(std::is_same_v<T, std::string>)
    checkChoiceOfAnyProgram(key, value);
  else if constexpr(std::is_same_v<T, float>)  // as written: 0.01f widened is below 0.01
    checkRangeOfAnyProgram(key, v.as<double>());
  else if constexpr(std::is_arithmetic_v<T>)
    checkRangeOfAnyProgram(key, double(value));
  return value;
}

template <class T>
void Options::set(const std::string& key, const T& value) {
  node_ = std::make_shared<YAML::Node>(YAML::Clone(*node_));
  (*node_)[key] = value;
}

#define MARIAN_OPTION_TYPE(T)                                   \
  template T Options::get<T>(const std::string&) const;         \
  template void Options::set<T>(const std::string&, const T&);
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

std::string Options::asYaml(const std::set<std::string>* only) const {
  std::map<std::string, YAML::Node> sorted;
  for(auto it = node_->begin(); it != node_->end(); ++it)
    if(!only || only->count(it->first.as<std::string>()))
      sorted[it->first.as<std::string>()] = it->second;
  // --relative-paths given (MODEL.decoder.yml relative to the model): kept, and the paths written
  // absolute, as reading the YAML with it takes a relative one from the YAML's folder
  const std::set<std::string> paths(pathOptions().begin(), pathOptions().end());
  bool relative = (*node_)["relative-paths"].IsDefined() && (*node_)["relative-paths"].as<bool>();
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(auto& [key, value] : sorted) {
    if(marianLacks(key) && hasDefault(key, value))
      continue;
    // a new node, not assigned to `value`: assigning a YAML::Node writes through to the options
    const YAML::Node shown =
        relative && paths.count(key) ? absolutePaths(value, std::filesystem::current_path()) : value;
    out << YAML::Key << key << YAML::Value;
    if(shown.IsSequence())
      out << YAML::Flow;
    out << shown;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string Options::ofANode() {
  std::string list;
  for(const std::string& name : nodeOptions())
    list += (list.empty() ? "--" : ", --") + name;
  return list;
}

std::map<std::string, std::string> Options::sharedByRanks() const {
  std::map<std::string, std::string> shared;
  for(auto it = node_->begin(); it != node_->end(); ++it) {
    std::string key = it->first.as<std::string>();
    if(!differsPerNode(key))
      shared[key] = valueText(key, it->second);
  }
  return shared;
}

namespace {

// The --help text's options of this program into `desc`, each with its parser; implicitOptions:
// those that take an optional value (--exponential-smoothing).
void describeOptions(int modeBit, po::options_description& desc, std::set<std::string>& implicitOptions) {
  desc.add_options()("help,h", "Print this help and exit");
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit))
      continue;
    std::string names = std::string(s.name) + (*s.shortName ? std::string(",") + s.shortName : "");
    std::string help = s.help + std::string(*s.defaultYaml ? " (default: " + std::string(s.defaultYaml) + ")" : "");
    if(s.type.kind == Kind::Flag) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value("true")->zero_tokens(), help.c_str());
    } else if(s.type.list() && *s.implicitValue) {  // its values may be left out (fromCommandLine)
      desc.add_options()(names.c_str(), po::value<std::vector<std::string>>()->multitoken()->zero_tokens(),
                         help.c_str());
    } else if(s.type.list()) {
      desc.add_options()(names.c_str(), po::value<std::vector<std::string>>()->multitoken(), help.c_str());
    } else if(*s.implicitValue) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value(s.implicitValue), help.c_str());
      implicitOptions.insert(std::string("--") + s.name);
    } else {
      desc.add_options()(names.c_str(), po::value<std::string>(), help.c_str());
    }
  }
}

// What the command line gives, by option name (the last occurrence of an option wins, as with
// config files; "-c a.yml -c b.yml" means both files). Errors name an unknown option or argument.
std::map<std::string, std::vector<std::string>> commandLineValues(int argc, const char* const* argv, int modeBit,
                                                                  const po::options_description& desc,
                                                                  const std::set<std::string>& implicitOptions) {
  // Marian's options this program lacks parse too, out of --help: a bare flag, a value or a list
  po::options_description hidden;
  for(const std::string& name : marianOnlyOptionNames())
    if(!ownSpec(name, modeBit))  // Marian's --no-spm-encode is the decoder's here, inert in training
      hidden.add_options()(name.c_str(), po::value<std::vector<std::string>>()->multitoken()->zero_tokens(), "");
  po::options_description parseable;
  parseable.add(desc).add(hidden);

  // "--exponential-smoothing 0.001" as Marian accepts it: join an optional value to its option.
  // "--overwrite-checkpoint=false" as Marian's flags take it: boost's zero-token flags take no
  // value, so the value is kept aside and the flag passed bare.
  // "--optimizer-params 0.9 -0.5 1e-9" as Marian takes it: boost ends a list at a token that
  // starts with '-', so a list's values are collected here and the option passed with its first.
  std::set<std::string> flagOptions, listOptions;
  for(const Spec& s : specs()) {
    if((s.modes & modeBit) && s.type.kind == Kind::Flag)
      flagOptions.insert(std::string("--") + s.name);
    if((s.modes & modeBit) && s.type.list() && std::string(s.name) != "config")  // -c files merge (below)
      listOptions.insert(std::string("--") + s.name);
  }
  std::map<std::string, std::string> flagValues;
  std::map<std::string, std::vector<std::string>> listValues;
  std::vector<std::string> args;
  auto isValue = [](const char* next) {  // not an option: a word, or a number such as -1
    return next[0] != '-' || std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.';
  };
  for(int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if(eq != std::string::npos && flagOptions.count(a.substr(0, eq))) {
      flagValues[a.substr(2, eq - 2)] = a.substr(eq + 1);
      args.push_back(a.substr(0, eq));
      continue;
    }
    if(flagOptions.count(a))  // a bare flag after "--flag=false": the last one wins
      flagValues.erase(a.substr(2));
    if(listOptions.count(a))  // a list given bare after one with values: the last one wins
      listValues.erase(a.substr(2));
    if(listOptions.count(a) && i + 1 < argc && isValue(argv[i + 1])) {
      std::vector<std::string>& values = listValues[a.substr(2)];
      values.clear();  // the last occurrence wins
      while(i + 1 < argc && isValue(argv[i + 1]))
        values.push_back(argv[++i]);
      args.push_back(a + "=" + values.front());
      continue;
    }
    if(implicitOptions.count(a) && i + 1 < argc && isValue(argv[i + 1]))
      a += std::string("=") + argv[++i];
    args.push_back(a);
  }

  std::map<std::string, std::vector<std::string>> given;
  try {
    po::parsed_options parsed = po::command_line_parser(args)
                                   .options(parseable)
                                   // full names only, as Marian: "--lr-decay" must not become --lr-decay-inv-sqrt
                                   .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                                   .run();
    for(const po::option& opt : parsed.options) {
      if(opt.unregistered || opt.position_key >= 0)
        ABORT("Unexpected argument '{}' on the command line (see --help)",
              opt.original_tokens.empty() ? opt.string_key : opt.original_tokens[0]);
      // "-c a.yml -c b.yml" means both files, in order, as "-c a.yml b.yml" does
      if(opt.string_key == "config" && given.count("config"))
        given["config"].insert(given["config"].end(), opt.value.begin(), opt.value.end());
      else if(flagValues.count(opt.string_key))
        given[opt.string_key] = {flagValues[opt.string_key]};
      else if(listValues.count(opt.string_key))
        given[opt.string_key] = listValues[opt.string_key];
      else
        given[opt.string_key] = opt.value;
    }
  } catch(const po::unknown_option& e) {
    ABORT("Unknown option '{}' (see --help)", e.get_option_name());
  } catch(const po::too_many_positional_options_error&) {
    ABORT("Unexpected argument on the command line; options start with '--' (see --help)");
  } catch(const po::error& e) {
    ABORT("Command line: {}", e.what());
  }

  return given;
}

// The training files must exist now (vocabularies may be created).
void checkTrainingFiles(const Options& opt) {
  auto train = opt.get<std::vector<std::string>>("train-sets", {});
  if(opt.get<bool>("tsv"))
    ABORT_IF(train.size() != 1, "--tsv: --train-sets needs one file (source TAB target on each line), got {}",
             train.size());
  else
    ABORT_IF(train.size() != 2, "--train-sets needs a source and a target file (or one with --tsv), got {}",
             train.size());
  for(const std::string& f : train)
    ABORT_IF(!fileExists(f), "Training file '{}' (--train-sets) does not exist", f);
  auto valid = opt.get<std::vector<std::string>>("valid-sets", {});
  ABORT_IF(!valid.empty() && valid.size() != 2, "--valid-sets needs a source and a target file, got {}", valid.size());
  for(const std::string& f : valid)
    ABORT_IF(!fileExists(f), "Validation file '{}' (--valid-sets) does not exist", f);
  // Marian picks a model's format by its name; a .bin written as npz would mislead its tools
  std::string model = opt.get<std::string>("model");
  ABORT_IF(model.size() < 5 || model.compare(model.size() - 4, 4, ".npz") != 0,
           "--model '{}': models are written as .npz here (Marian's .bin format is not implemented): give a name "
           "ending in .npz",
           model);
}

}  // namespace

ParsedOptions parseOptions(int argc, const char* const* argv, ProgramMode mode) {
  int modeBit = mode == ProgramMode::translation ? kTranslate : kTrain;
  po::options_description desc("Options");
  std::set<std::string> implicitOptions;
  describeOptions(modeBit, desc, implicitOptions);
  std::map<std::string, std::vector<std::string>> given = commandLineValues(argc, argv, modeBit, desc, implicitOptions);

  ParsedOptions result;
  if(given.count("help")) {
    result.exitNow = true;
    result.print = helpText(desc, mode);
    return result;
  }
  if(given.count("version")) {
    result.exitNow = true;
    result.print = std::string(MARIAN_VERSION) + "\n";
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
  std::map<std::string, std::string> origin;  // option -> the config file that set it last
  for(const std::string& file : configFiles) {
    ABORT_IF(!fileExists(file), "Config file '{}' (--config) does not exist", file);
    ABORT_IF(isDirectory(file), "Config file '{}' (--config) is a directory, not a YAML file", file);
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ABORT_IF(in.bad(), "Config file '{}' could not be read", file);
    mergeConfig(text, file, modeBit, config, writtenByMarian(text), &origin, &result.warnings);
  }

  // 3. the command line
  for(const std::string& name : marianOnlyOptionNames()) {
    if(!given.count(name) || ownSpec(name, modeBit))
      continue;
    const std::vector<std::string>& values = given[name];
    YAML::Node value(values.empty() ? YAML::Node("true") : YAML::Node(values[0]));
    if(values.size() > 1) {
      value = YAML::Node(YAML::NodeType::Sequence);
      for(const std::string& v : values)
        value.push_back(v);
    }
    acceptMarianOnlyOption(name, value, " on the command line");
  }
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit) || !given.count(s.name) || std::string(s.name) == "config")
      continue;
    config[s.name] = fromCommandLine(s, given[s.name]);
  }
  std::set<std::string> fromFiles, fromCommandLine;
  for(const auto& [key, file] : origin)
    fromFiles.insert(key);
  for(const auto& [key, values] : given)
    fromCommandLine.insert(key);
  // Marian's --dump-config [full|minimal|expand]: every option, or what the files and the command
  // line set; full and minimal with --task as given, expand with what it set instead (Marian
  // expands its aliases for expand only)
  std::string dump = config["dump-config"].IsDefined() ? config["dump-config"].as<std::string>() : "";
  config.remove("dump-config");
  config.remove("config");
  std::set<std::string> set = fromFiles;
  set.insert(fromCommandLine.begin(), fromCommandLine.end());
  if(!dump.empty() && dump != "false" && dump != "expand") {
    result.exitNow = true;
    result.options = Options(config);
    result.print = result.options.asYaml(dump == "full" ? nullptr : &set);
    return result;
  }
  std::set<std::string> preset = expandTaskPresets(config, fromFiles, fromCommandLine, given.count("task") > 0);

  result.options = Options(config);
  Options& opt = result.options;
  if(dump == "expand") {
    result.exitNow = true;
    set.insert(preset.begin(), preset.end());
    result.print = opt.asYaml(&set);
    return result;
  }

  if(mode == ProgramMode::training)
    checkTrainingFiles(opt);
  // Marian's "-d 0 1" means two GPUs, as its --cpu-threads defaults to 0; here it defaults to 1
  // (a config file's devices with its own cpu-threads, as Marian's model.npz.yml, say what they mean)
  bool threadsSet = fromCommandLine.count("cpu-threads") || fromFiles.count("cpu-threads");
  if((fromCommandLine.count("devices") || (fromFiles.count("devices") && !threadsSet)) &&
     opt.get<int>("cpu-threads") > 0) {
    std::string ids;
    for(const std::string& id : opt.get<std::vector<std::string>>("devices"))
      ids += (ids.empty() ? "" : " ") + id;
    int threads = opt.get<int>("cpu-threads");
    result.warnings.push_back(format("--devices {} is not used: --cpu-threads {} runs on {} CPU device(s) (this "
                                     "program's default is 1, Marian's 0); add --cpu-threads 0 for the GPUs",
                                     ids, threads, threads));
  }
  return result;
}

Options modelOptions(std::string yaml, const std::string& source) {
  while(!yaml.empty() && yaml.back() == '\0')  // Marian's special:model.yml ends with a NUL byte
    yaml.pop_back();
  YAML::Node config(YAML::NodeType::Map);
  for(const Spec& s : specs())
    if((s.modes & kTrain) && *s.defaultYaml)
      config[s.name] = typed(s, YAML::Load(s.defaultYaml), " (default)");
  mergeConfig(yaml, source, kTrain, config, /*modelFile=*/true);
  return Options(config);
}

void logProgramStart(int argc, const char* const* argv, const Options& options, bool withCommandLine) {
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  if(!withCommandLine) {  // another rank of the job: where it runs, for the launcher and the reader
    LOG(info, "[marian] Running on {} as process {}", host, int(getpid()));
    return;
  }
  std::string command = argv[0];
  for(int i = 1; i < argc; ++i)
    command += std::string(" ") + argv[i];
  LOG(info, "[marian] {}", MARIAN_VERSION);
  LOG(info, "[marian] Running on {} as process {} with command line:", host, int(getpid()));
  LOG(info, "[marian] {}", command);
  std::istringstream config(options.asYaml());
  for(std::string line; std::getline(config, line);)
    LOG(info, "[config] {}", line);
}

std::optional<Options> startProgram(int argc, const char* const* argv, ProgramMode mode) {
  ParsedOptions parsed = parseOptions(argc, argv, mode);
  if(parsed.exitNow) {
    std::fputs(parsed.print.c_str(), stdout);
    return std::nullopt;
  }
  const Options& o = parsed.options;
  logging::configure(o.get<std::string>("log"), o.get<bool>("quiet"), o.get<std::string>("log-level"),
                     o.get<std::string>("valid-log"));
  for(const std::string& w : parsed.warnings)
    LOG(warn, "[config] {}", w);
  return parsed.options;
}

}  // namespace marian
