#include "common/command_line.h"

#include <boost/program_options.hpp>
#include <cctype>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/marian_only_options.h"
#include "common/option_table.h"

namespace marian {

namespace po = boost::program_options;
using namespace option_table;

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
std::map<std::string, std::vector<std::string>> valuesByName(int argc, const char* const* argv, int modeBit,
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
                                   // full names only, as Marian: "--lr-decay-inv" must not become --lr-decay-inv-sqrt
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

std::string helpText(const po::options_description& desc, ProgramMode mode) {
  std::ostringstream out;
  out << "Usage: " << programName(mode) << " [options]\n" << desc;
  return out.str();
}

}  // namespace

std::map<std::string, std::vector<std::string>> commandLineValues(int argc, const char* const* argv, ProgramMode mode,
                                                                  std::string& help) {
  int modeBit = optionModeBit(mode);
  po::options_description desc("Options");
  std::set<std::string> implicitOptions;
  describeOptions(modeBit, desc, implicitOptions);
  std::map<std::string, std::vector<std::string>> given = valuesByName(argc, argv, modeBit, desc, implicitOptions);
  if(given.count("help"))
    help = helpText(desc, mode);
  return given;
}

}  // namespace marian
