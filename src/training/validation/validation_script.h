#pragma once
// defines: runValidationScript — Marian's --valid-script-path: the command, then
// --valid-script-args, then (for the translation metric) the translation file, run through the
// shell as Marian runs it (so "bash ./validate.sh" works); its score is the number its standard
// output ends with. A script that fails or prints no number stops training with an error naming
// it: a score of 0 would decide early stopping and --keep-best silently.
#include <string>
#include <vector>

namespace marian {

double runValidationScript(const std::string& command, const std::vector<std::string>& args,
                           const std::string& file = "");

}  // namespace marian
