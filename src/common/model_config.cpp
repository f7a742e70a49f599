#include "common/model_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iterator>

#include "common/error.h"
#include "common/file_util.h"
#include "common/format.h"
#include "common/npz.h"
#include "common/option_table.h"

namespace marian {

using namespace option_table;

std::string modelConfigYaml(const Options& options, const std::vector<size_t>& vocabSizes) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(const Spec& s : specs()) {
    if(!(s.modes & kModel))
      continue;
    ABORT_IF(!options.yaml()[s.name].IsDefined(), "Model option '{}' is not set", s.name);
    out << YAML::Key << s.name << YAML::Value << options.yaml()[s.name];
  }
  out << YAML::Key << "dim-vocabs" << YAML::Value << YAML::Flow << vocabSizes;
  out << YAML::Key << "version" << YAML::Value << MARIAN_VERSION << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {
// Whether two values of an option of `type` are the same value ("0.10" and "0.1" are).
bool sameValue(const Type& type, const YAML::Node& a, const YAML::Node& b) {
  if(a.IsSequence() || b.IsSequence()) {
    if(!a.IsSequence() || !b.IsSequence() || a.size() != b.size())
      return false;
    for(size_t i = 0; i < a.size(); ++i)
      if(!sameValue(type, a[i], b[i]))
        return false;
    return true;
  }
  if(!a.IsScalar() || !b.IsScalar())
    return a.IsScalar() == b.IsScalar();
  if(type.numeric())
    return a.as<double>() == b.as<double>();
  if(type.kind == Kind::Flag)
    return a.as<bool>() == b.as<bool>();
  return a.Scalar() == b.Scalar();
}

std::string shown(const YAML::Node& value) {
  if(!value.IsSequence())
    return value.IsScalar() ? value.Scalar() : "(none)";
  std::string text;
  for(const YAML::Node& v : value)
    text += (text.empty() ? "" : " ") + v.Scalar();
  return text;
}
}  // namespace

std::string architectureDifferences(const std::string& savedYaml, const Options& options) {
  Options saved = modelOptions(savedYaml, "the saved architecture");
  std::string differences;
  for(const Spec& s : specs()) {
    if(!(s.modes & kModel))
      continue;
    YAML::Node then = saved.yaml()[s.name], now = options.yaml()[s.name];
    if(!now.IsDefined() || now.IsNull())
      now = specDefault(s.name);
    if(sameValue(s.type, then, now))
      continue;
    differences += format("{}--{} {} (this run: {})", differences.empty() ? "" : ", ", s.name, shown(then), shown(now));
  }
  return differences;
}

Options architectureOfModel(const std::string& model) {
  ABORT_IF(!fileExists(model), "Model file {} does not exist", model);
  ABORT_IF(isDirectory(model), "Model file {} is a directory, not a model file", model);
  for(const NpzItem& item : readNpz(model))
    if(item.name == "special:model.yml")
      return modelOptions(std::string(item.bytes.begin(), item.bytes.end()), model + " (special:model.yml)");
  std::string config = model + ".yml";
  if(fileExists(config)) {
    std::ifstream in(config);
    return modelOptions(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), config);
  }
  ABORT("Neither {}.yml nor a configuration inside {} (special:model.yml): the model's architecture (--type, "
        "--dim-emb, ...) is needed",
        model, model);
}

}  // namespace marian
