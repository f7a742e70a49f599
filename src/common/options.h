#pragma once
// defines: marian::Options (the effective configuration, as YAML) and parseOptions, which
// merges Marian's defaults, the --config YAML files (later files win) and the command line
// (wins over all), with Marian's option names. Unknown options, values of the wrong type and
// missing required files are errors that name them.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace marian {

class Options {
public:
  Options();
  explicit Options(const YAML::Node& node);

  bool has(const std::string& key) const;
  // Typed access; a key that is not set reads the option table's default (the one place a
  // default is written); one with no default, or a value that does not convert, is an error
  // naming the key.
  // Defined for bool, int, size_t, float, double, std::string and vectors of int, float, string.
  template <class T>
  T get(const std::string& key) const;
  // For keys whose absence means something other than the table's default.
  template <class T>
  T get(const std::string& key, const T& fallback) const {
    return has(key) ? get<T>(key) : fallback;
  }

  // Sets one option in this object only (copies made before keep their value). Defined for the
  // types get is.
  template <class T>
  void set(const std::string& key, const T& value);

  // A deep copy: reading a YAML node is not safe from several threads at once (ranks that are
  // threads of one process each take their own).
  Options clone() const;

  // The effective configuration, keys sorted (`only`: those keys alone).
  std::string asYaml(const std::set<std::string>* only = nullptr) const;
  // The options every rank of a job must share with rank 0 (all but a node's own, kNode), each
  // value written as one line of YAML.
  std::map<std::string, std::string> sharedByRanks() const;
  // The options a node may set for itself, "--config, --devices, ...".
  static std::string ofANode();
  const YAML::Node& yaml() const { return *node_; }

private:
  std::shared_ptr<YAML::Node> node_;
};

// modelConfig: a trained model's configuration (training options, no file checks): what the
// decoder reads for the architecture.
enum class ProgramMode { training, translation, scoring, modelConfig };
// The option table's bit of a program's options (option_table::kTrain, kTranslate, kScore).
int optionModeBit(ProgramMode mode);
// The program's name for --help and errors: marian, marian-decoder, marian-scorer.
const char* programName(ProgramMode mode);

// The result of parsing: options, or the text to print and exit with (--help, --dump-config).
struct ParsedOptions {
  Options options;
  bool exitNow = false;
  std::string print;  // what --help or --dump-config asked for
  std::vector<std::string> warnings;  // for the log, once it is configured
};

ParsedOptions parseOptions(int argc, const char* const* argv, ProgramMode mode);

// A trained model's options (its architecture) from the YAML it was saved with (MODEL.yml or the
// model's special:model.yml, trailing NUL allowed), over the training defaults, read in memory;
// `source` names it in errors.
Options modelOptions(std::string yaml, const std::string& source);

// The start of marian and marian-decoder: parses; prints what --help or --dump-config asked for
// and returns nothing (the program exits with 0); otherwise configures logging (--log, --quiet)
// and returns the options.
std::optional<Options> startProgram(int argc, const char* const* argv, ProgramMode mode);

// Marian's first log lines, so that a log says what made it: the version, host and command line,
// then every option in effect (the caller prints them once per job: by rank 0); without the
// command line, only the host and process (the other ranks).
void logProgramStart(int argc, const char* const* argv, const Options& options, bool withCommandLine = true);

}  // namespace marian
