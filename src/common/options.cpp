#include "common/options.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <type_traits>
#include <sstream>

#include <unistd.h>

#include "common/command_line.h"
#include "common/config_file.h"
#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/marian_only_options.h"
#include "common/option_table.h"
#include "common/task_presets.h"

namespace marian {

using namespace option_table;

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
        relative && paths.count(key)
            ? absolutePathsOf(key, value, static_cast<const YAML::Node&>(*node_)["tsv"], std::filesystem::current_path())
            : value;
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
  std::string weights = opt.get<std::string>("data-weighting");
  ABORT_IF(!opt.get<bool>("tsv") && !weights.empty() && !fileExists(weights),
           "Weights file '{}' (--data-weighting) does not exist", weights);
  std::string alignment = opt.get<std::string>("guided-alignment");
  ABORT_IF(!opt.get<bool>("tsv") && alignment != "none" && !fileExists(alignment),
           "Alignment file '{}' (--guided-alignment) does not exist", alignment);
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

// Marian's vocabularies where --vocabs is not given: TRAIN.yml (or .yaml, .json) beside each
// training file, found or created; one for both sides beside a --tsv file.
void defaultVocabs(Options& opt) {
  if(!opt.get<std::vector<std::string>>("vocabs", {}).empty())
    return;
  std::vector<std::string> vocabs;
  for(const std::string& train : opt.get<std::vector<std::string>>("train-sets")) {
    std::string found = train + ".yml";
    for(const char* suffix : {".yml", ".yaml", ".json"})
      if(fileExists(train + suffix)) {
        found = train + suffix;
        break;
      }
    vocabs.push_back(found);
  }
  if(vocabs.size() == 1)
    vocabs.push_back(vocabs[0]);
  opt.set("vocabs", vocabs);
}

}  // namespace

int optionModeBit(ProgramMode mode) {
  return mode == ProgramMode::translation ? kTranslate : mode == ProgramMode::scoring ? kScore : kTrain;
}

const char* programName(ProgramMode mode) {
  return mode == ProgramMode::translation ? "marian-decoder" : mode == ProgramMode::scoring ? "marian-scorer" : "marian";
}

ParsedOptions parseOptions(int argc, const char* const* argv, ProgramMode mode) {
  int modeBit = optionModeBit(mode);
  std::string help;
  std::map<std::string, std::vector<std::string>> given = commandLineValues(argc, argv, mode, help);

  ParsedOptions result;
  if(given.count("help")) {
    result.exitNow = true;
    result.print = help;
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

  if(mode == ProgramMode::training) {
    checkTrainingFiles(opt);
    defaultVocabs(opt);
  }
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
