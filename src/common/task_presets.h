#pragma once
// defines: marian::expandTaskPresets — Marian's --task presets (transformer-base, transformer-big
// and their pre-norm variants, Vaswani et al. 2017 with Marian's training settings): the options
// each sets, applied to a merged configuration with Marian's priorities (an option given
// explicitly on the command line wins; an option in a config file wins over a preset from a file,
// not over one from the command line; of two presets, the first in Marian's order).
#include <set>
#include <string>

namespace YAML {
class Node;
}

namespace marian {

// config: the defaults, config files and command line merged; fromFiles / fromCommandLine: the
// keys each set; taskOnCommandLine: where --task came from. Sets the presets' options, removes
// "task" (a written configuration holds what it expanded to, as Marian's) and returns the keys
// it set. An unknown task value is an error naming the known ones.
std::set<std::string> expandTaskPresets(YAML::Node& config, const std::set<std::string>& fromFiles,
                                        const std::set<std::string>& fromCommandLine, bool taskOnCommandLine);

}  // namespace marian
