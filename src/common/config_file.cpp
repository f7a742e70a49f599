#include "common/config_file.h"

#include <yaml-cpp/yaml.h>

#include <cctype>

#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"
#include "common/marian_only_options.h"
#include "common/option_table.h"

namespace marian {

using namespace option_table;

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

YAML::Node absolutePathsOf(const std::string& key, const YAML::Node& value, const YAML::Node& tsv,
                           const std::filesystem::path& base) {
  bool extra = key == "data-weighting" || key == "guided-alignment";  // a file, or a TSV field's index
  bool fieldIndex = extra && value.IsScalar() && !value.Scalar().empty() &&
                    value.Scalar().find_first_not_of("0123456789") == std::string::npos &&
                    !(tsv.IsDefined() && tsv.IsScalar() && tsv.Scalar() == "false");
  bool off = key == "guided-alignment" && value.IsScalar() && value.Scalar() == "none";
  return fieldIndex || off ? YAML::Node(value) : absolutePaths(value, base);
}

namespace {

// Marian's "relative-paths: true" in a config file: the file's paths are relative to its folder.
// As Marian, they are made absolute and the key goes (it does not spread to other files), so a
// configuration written from them (model.npz.yml, --dump-config) reads the same from anywhere.
void resolvePathsOfFile(YAML::Node& loaded, const std::string& file) {
  std::filesystem::path base = std::filesystem::absolute(std::filesystem::path(file)).parent_path();
  for(const std::string& key : pathOptions())
    if(loaded[key].IsDefined())
      loaded[key] = absolutePathsOf(key, loaded[key], static_cast<const YAML::Node&>(loaded)["tsv"], base);
  loaded.remove("relative-paths");
}

// Marian interpolates the environment's variables in its paths before it writes model.npz.yml
// (config_parser.cpp): there "interpolate-env-vars: true" asks for nothing more.
bool doneByMarian(const std::string& key) { return key == "interpolate-env-vars"; }

}  // namespace

// One YAML configuration (a --config file, or the one embedded in a model) over what is already
// merged. Keys given twice are an error (YAML leaves the winner to the parser), as are wrong
// values and unknown keys; Marian's options this program lacks are accepted while they ask for
// nothing (common/marian_only_options.h). A configuration Marian wrote (modelFile) may also hold
// its writer's "version", interpolate-env-vars (done) and options of other Marian versions:
// ignored, the last named in `warnings` where given (a user's copy of such a file may hold a
// misspelt option); `file` names where it came from.
void mergeConfig(const std::string& text, const std::string& file, int modeBit, YAML::Node& config, bool modelFile,
                 std::map<std::string, std::string>* origin, std::vector<std::string>* warnings) {
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

// A configuration Marian wrote is read like a model's: its special:model.yml carries "version:
// v1.12.0 65bf82ff 2023-02-21" (its program's version, where a user's config could only hold the
// --version flag), and every file it dumps (model.npz.yml, --dump-config) all of its options, with
// authors, cite and build-info among them, which no user's configuration needs.
bool writtenByMarian(const std::string& text) {
  try {
    YAML::Node n = YAML::Load(text);
    if(!n.IsMap())
      return false;
    if(n["authors"] && n["cite"] && n["build-info"])
      return true;
    if(!n["version"] || !n["version"].IsScalar())
      return false;
    std::string v = n["version"].Scalar();
    return v.size() > 1 && v[0] == 'v' && std::isdigit(static_cast<unsigned char>(v[1]));
  } catch(const YAML::Exception&) {
    return false;  // mergeConfig names the error
  }
}

}  // namespace marian
