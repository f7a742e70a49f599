#pragma once
// defines: marian::mergeConfig, writtenByMarian, absolutePaths — one YAML configuration (a
// --config file, or the one a model embeds) read as Marian reads it over what is already merged:
// its relative-paths, Marian's options this program lacks, and the files Marian itself wrote.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace marian {

// A path option's value (a path or a list of them) with each relative path taken from `base`,
// made absolute (empty, stdin and stdout stay as they are).
YAML::Node absolutePaths(const YAML::Node& value, const std::filesystem::path& base);
// The same of the option `key`'s value, except --data-weighting's and --guided-alignment's where it
// is a TSV field's index (digits, and `tsv`, the configuration's "tsv" where it has one, not false)
// and --guided-alignment's none.
YAML::Node absolutePathsOf(const std::string& key, const YAML::Node& value, const YAML::Node& tsv,
                           const std::filesystem::path& base);

// `text` (the configuration read from `file`) over `config`, for the program of `modeBit`.
// Keys given twice are an error, as are wrong values and unknown keys; Marian's options this
// program lacks are accepted while they ask for nothing. A configuration Marian wrote
// (modelFile) may also hold its writer's "version", interpolate-env-vars (done) and options of
// other Marian versions: ignored, the last named in `warnings` where given. `origin` records
// each key set here as set by `file`.
void mergeConfig(const std::string& text, const std::string& file, int modeBit, YAML::Node& config,
                 bool modelFile = false, std::map<std::string, std::string>* origin = nullptr,
                 std::vector<std::string>* warnings = nullptr);

// Whether `text` is a configuration Marian wrote (its "version: v1.12.0 ..." key).
bool writtenByMarian(const std::string& text);

}  // namespace marian
