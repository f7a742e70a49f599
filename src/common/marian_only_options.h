#pragma once
// defines: marian::acceptMarianOnlyOption — the options of Marian v1.12 (marian, marian-decoder)
// that this program does not implement, so that any configuration Marian writes or reads
// (model.npz.yml, decoder.yml, a user's train.yml) is read here too: such an option is accepted
// when its value asks for nothing (Marian's default, or a setting that changes no result here,
// such as a thread count or a log's time zone) and is an error naming the option and its value
// when it asks for something this program does not do.
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace marian {

// false when `key` is not such an option (the caller decides: unknown, or one of ours); true when
// it is and `value` asks for nothing; aborts otherwise. `where` says where the value was given
// (" in config file 'f', line 3", " on the command line").
bool acceptMarianOnlyOption(const std::string& key, const YAML::Node& value, const std::string& where);

// Their names, for the command line's parser.
std::vector<std::string> marianOnlyOptionNames();

}  // namespace marian
