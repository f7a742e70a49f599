#pragma once
// defines: marian::commandLineValues — the command line as Marian's programs take it (boost's
// parser behind it, with Marian's spellings: "--flag=false", lists with negative numbers, an
// optional value joined to its option, "-c a.yml -c b.yml"), by option name.
#include <map>
#include <string>
#include <vector>

#include "common/options.h"

namespace marian {

// What the command line gives, by option name (the last occurrence of an option wins; every -c
// file counts). Errors name an unknown option or argument. With --help, `help` is the help text.
std::map<std::string, std::vector<std::string>> commandLineValues(int argc, const char* const* argv, ProgramMode mode,
                                                                  std::string& help);

}  // namespace marian
