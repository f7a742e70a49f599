// The YAML configuration: the input as a --config file of marian (training) and marian-decoder
// (translation), and as a model's embedded configuration (modelOptions, trailing NULs allowed).
#include <yaml-cpp/yaml.h>

#include "common/options.h"
#include "fuzz_common.h"

using namespace marian;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::writeFile("config.yml", data, size);
  for(ProgramMode mode : {ProgramMode::training, ProgramMode::translation}) {
    fuzz::errorsAllowed([&] {
      const char* argv[] = {"marian", "--config", path.c_str()};
      ParsedOptions parsed = parseOptions(3, argv, mode);
      if(!parsed.exitNow)
        parsed.options.asYaml();
    });
  }
  fuzz::errorsAllowed([&] {
    Options o = modelOptions(std::string(reinterpret_cast<const char*>(data), size), "special:model.yml");
    o.asYaml();
    o.get<int>("dim-emb");
    o.get<std::string>("type");
    o.get<std::vector<int>>("dim-vocabs");
  });
  return 0;
}
