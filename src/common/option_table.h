#pragma once
// defines: marian::option_table — the options of marian, marian-decoder and marian-scorer, each
// written once (option_table.cpp): its name, kind, range or choices, default, programs and help;
// and the checks of a value against its option (option_values.cpp). Read by common/options.cpp
// (parsing, Options::get) only.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace marian {
namespace option_table {

enum class Kind { Flag, Int, Float, String, Strings, Ints, Floats };
// kOurs: an option of this program that Marian v1.12 lacks, or that it never writes into its
// model.npz.yml (--fp16, an alias it expands). A configuration written here
// (model.npz.yml, --dump-config) leaves such options out while they have their defaults, so that
// real Marian's -c reads it (Marian refuses a key it does not know); one that asks for something
// stays, and Marian's refusal names it.
// kModel: the model's architecture, written into model.npz's special:model.yml and model.npz.yml
// (modelConfigYaml), from where marian-decoder and a resume read it.
// kNode: a node's own, which may differ between the ranks of one job: its hardware (--devices,
// --cpu-threads, --workspace, --data-threads), its logging and temporary files, rank 0's own
// validation files, and the paths of its copies of the corpus, the vocabularies and a pretrained
// model (whose contents the ranks compare instead, as they compare the batches --workspace fits).
// Every other option must be rank 0's (training/loop/rank_agreement).
// kScore: marian-scorer's. kBoth: marian's and marian-decoder's; kAnyProgram: any of the three.
enum Modes { kTrain = 1, kTranslate = 2, kBoth = 3, kOurs = 4, kModel = 8, kNode = 16, kScore = 32,
             kAnyProgram = kBoth | kScore };

// An option's kind and, for numbers, the closed range every value must lie in (defaults, config
// files and the command line alike), so a nonsense value stops the program naming the option
// instead of dividing by zero, allocating without bound or training silently on.
struct Type {
  Kind kind;
  double lo = 0, hi = 0;
  const char* choices = nullptr;  // a string's allowed values, "a|b|c" (null: any)
  bool numeric() const { return kind == Kind::Int || kind == Kind::Ints || kind == Kind::Float || kind == Kind::Floats; }
  bool list() const { return kind == Kind::Strings || kind == Kind::Ints || kind == Kind::Floats; }
};
struct Spec {
  const char* name;
  const char* shortName;  // "" when none
  Type type;
  const char* defaultYaml;  // "" = no default (absent unless given)
  int modes;
  const char* help;
  const char* implicitValue = "";  // value when given without one (--exponential-smoothing)
};


const std::vector<Spec>& specs();
// The options that name files or folders (--relative-paths resolves them).
const std::vector<std::string>& pathOptions();

// The option of that name in this program (marian, marian-decoder, marian-scorer: modeBit); an
// option of another program otherwise, so that the caller can say it does not belong here.
const Spec* findSpec(const std::string& name, int modeBit);
// This program's option of that name for this mode, or nullptr.
const Spec* ownSpec(const std::string& name, int modeBit);
const char* kindName(Kind k);
// A value checked against its option's kind, range and choices (`where`: " in FILE" or so); a
// scalar given for a list becomes a 1-element list.
YAML::Node typed(const Spec& spec, const YAML::Node& value, const std::string& where);
// The values given on the command line for it.
YAML::Node fromCommandLine(const Spec& spec, const std::vector<std::string>& values);
// A list option's implicit values, split at spaces ("--cost-scaling" given bare: 8 10000 1 8).
std::vector<std::string> implicitList(const Spec& spec);
// The table's default of a known option that has one (null otherwise; an option whose default
// differs between the programs, --workspace, --mini-batch, --maxi-batch and others, has none here).
YAML::Node specDefault(const std::string& key);
// Errors unless `value` is a choice of the option `key` in one of the programs.
void checkChoiceOfAnyProgram(const std::string& key, const std::string& value);
// Errors unless the number `value` lies in the range of the option `key` in one of the programs.
void checkRangeOfAnyProgram(const std::string& key, double value);
// Whether Marian v1.12 lacks the option `key` (kOurs).
bool marianLacks(const std::string& key);
// Whether the option `key` is a node's own (kNode); the training options that are.
bool differsPerNode(const std::string& key);
std::vector<std::string> nodeOptions();
// Whether `value` is the default of this program's option `key` (compared as valueText).
bool hasDefault(const std::string& key, const YAML::Node& value);
// `value` of the option `key` as one line that is equal for equal values: numbers as the shortest
// decimal that reads back the same (1e-4 and 0.0001 alike), flags as true or false, lists as [a, b].
std::string valueText(const std::string& key, const YAML::Node& value);

}  // namespace option_table
}  // namespace marian
