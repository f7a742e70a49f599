// The YAML configuration: the input as a --config file of marian (training) or marian-decoder
// (translation), or as a model's embedded configuration (modelOptions, trailing NULs allowed).
// Which of the three is picked by the input's size, so that each input costs one parse (each
// sets up every option's default and is slow under the sanitizers) and replays the same.
#include <yaml-cpp/yaml.h>

#include "common/options.h"
#include "fuzz_common.h"

using namespace marian;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int which = int(size % 3);
  if(which < 2) {
    std::string path = fuzz::writeFile("config.yml", data, size);
    fuzz::errorsAllowed([&] {
      const char* argv[] = {"marian", "--config", path.c_str()};
      ParsedOptions parsed = parseOptions(3, argv, which == 0 ? ProgramMode::training : ProgramMode::translation);
      if(!parsed.exitNow)
        parsed.options.asYaml();
    });
  } else {
    fuzz::errorsAllowed([&] {
      Options o = modelOptions(std::string(reinterpret_cast<const char*>(data), size), "special:model.yml");
      o.asYaml();
      o.get<int>("dim-emb");
      o.get<std::string>("type");
      o.get<std::vector<int>>("dim-vocabs");
    });
  }
  return 0;
}
