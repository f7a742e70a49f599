#include "common/option_table.h"

#include <charconv>
#include <sstream>

#include "common/error.h"
#include "common/format.h"

// The option table's logic: a value checked against its option (kind, range, choices), the
// command line's values, defaults and a value's text; the table itself is option_table.cpp.
namespace marian {
namespace option_table {

const char* kindName(Kind k) {
  switch(k) {
    case Kind::Flag: return "a boolean";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a number";
    case Kind::String: return "a string";
    case Kind::Strings: return "a list of strings";
    case Kind::Ints: return "a list of integers";
    case Kind::Floats: return "a list of numbers";
  }
  return "";
}

namespace {

bool scalarConverts(const YAML::Node& v, Kind k) {
  if(!v.IsScalar())
    return false;
  try {
    switch(k) {
      case Kind::Flag: v.as<bool>(); break;
      case Kind::Int: case Kind::Ints: v.as<long long>(); break;
      case Kind::Float: case Kind::Floats: v.as<double>(); break;
      default: break;
    }
  } catch(const YAML::Exception&) {
    return false;
  }
  return true;
}

std::string rangeText(const Type& t) {
  auto bound = [&](double v) { return t.kind == Kind::Int || t.kind == Kind::Ints ? std::to_string((long long)v) : format("{}", v); };
  return "between " + bound(t.lo) + " and " + bound(t.hi);
}

// "a, b or c" of "a|b|c"
std::string choiceText(const char* choices) {
  std::vector<std::string> words;
  std::string word;
  for(const char* c = choices;; ++c) {
    if(*c == '|' || !*c) {
      words.push_back(word);
      word.clear();
      if(!*c)
        break;
    } else {
      word += *c;
    }
  }
  std::string text;
  for(size_t i = 0; i < words.size(); ++i)
    text += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return text;
}

bool isChoice(const char* choices, const std::string& value) {
  std::string all = std::string("|") + choices + "|";
  return all.find("|" + value + "|") != std::string::npos;
}

// Errors unless a string option's value is one of its choices.
void checkChoice(const Spec& spec, const std::string& value, const std::string& where) {
  ABORT_IF(spec.type.choices && !isChoice(spec.type.choices, value), "--{} must be {}, not '{}'{}", spec.name,
           choiceText(spec.type.choices), value, where.empty() ? "" : " (" + where.substr(1) + ")");
}

}  // namespace

YAML::Node typed(const Spec& spec, const YAML::Node& value, const std::string& where) {
  const Type& type = spec.type;
  auto fail = [&](const std::string& shown) {
    ABORT("Option '{}'{}: value '{}' is not {}", spec.name, where, shown, kindName(type.kind));
  };
  auto checkRange = [&](const YAML::Node& v) {
    if(!type.numeric())
      return;
    double x = v.as<double>();
    ABORT_IF(!(x >= type.lo && x <= type.hi), "--{} {}{} is out of range: it must be {}", spec.name, v.Scalar(),
             where.empty() ? "" : " (" + where.substr(1) + ")", rangeText(type));
  };
  if(type.list()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    if(value.IsNull())
      return seq;
    if(value.IsScalar()) {
      seq.push_back(value);
    } else if(value.IsSequence()) {
      seq = YAML::Clone(value);
    } else {
      fail(YAML::Dump(value));
    }
    for(const YAML::Node& item : seq) {
      if(!scalarConverts(item, type.kind))
        fail(YAML::Dump(value));
      checkRange(item);
      if(type.choices)
        checkChoice(spec, item.Scalar(), where);
    }
    return seq;
  }
  if(!scalarConverts(value, type.kind))
    fail(value.IsScalar() ? value.Scalar() : YAML::Dump(value));
  checkRange(value);
  if(type.choices)
    checkChoice(spec, value.Scalar(), where);
  return YAML::Clone(value);
}

std::vector<std::string> implicitList(const Spec& spec) {
  std::istringstream implicit(spec.implicitValue);
  std::vector<std::string> items;
  for(std::string item; implicit >> item;)
    items.push_back(item);
  return items;
}

YAML::Node fromCommandLine(const Spec& spec, const std::vector<std::string>& values) {
  if(spec.type.list()) {  // given without values: the implicit ones ("--cost-scaling": 8 10000 1 8)
    YAML::Node seq(YAML::NodeType::Sequence);
    for(const std::string& s : values.empty() ? implicitList(spec) : values)
      seq.push_back(YAML::Node(s));
    return typed(spec, seq, " on the command line");
  }
  // given without a value: a flag is true, an option with an implicit value takes it
  std::string value = !values.empty() ? values.back() : *spec.implicitValue ? spec.implicitValue : "true";
  return typed(spec, YAML::Node(value), " on the command line");
}

// (marian-decoder's --maxi-batch-sort takes fewer than marian's: parsing checks each program's own)
void checkChoiceOfAnyProgram(const std::string& key, const std::string& value) {
  const Spec* last = nullptr;
  for(const Spec& s : specs())
    if(key == s.name && s.type.choices) {
      if(isChoice(s.type.choices, value))
        return;
      last = &s;
    }
  if(last)
    checkChoice(*last, value, "");
}

void checkRangeOfAnyProgram(const std::string& key, double value) {
  const Spec* last = nullptr;
  for(const Spec& s : specs())
    if(key == s.name && s.type.numeric()) {
      if(value >= s.type.lo && value <= s.type.hi)
        return;
      last = &s;
    }
  ABORT_IF(last, "--{} {} is out of range: it must be {}", key, value, rangeText(last->type));
}

YAML::Node specDefault(const std::string& key) {
  const char* found = nullptr;
  for(const Spec& s : specs())
    if(key == s.name) {
      if(found && std::string(found) != s.defaultYaml)
        return YAML::Node(YAML::NodeType::Null);
      found = s.defaultYaml;
    }
  return found && *found ? YAML::Load(found) : YAML::Node(YAML::NodeType::Null);
}
bool marianLacks(const std::string& key) {
  const Spec* spec = findSpec(key, kAnyProgram);
  return spec && (spec->modes & kOurs);
}

std::vector<std::string> nodeOptions() {
  std::vector<std::string> names;
  for(const Spec& s : specs())
    if((s.modes & kTrain) && (s.modes & kNode))
      names.push_back(s.name);
  return names;
}

bool differsPerNode(const std::string& key) {
  const Spec* spec = findSpec(key, kTrain);
  return spec && (spec->modes & kNode);
}

bool hasDefault(const std::string& key, const YAML::Node& value) {
  const Spec* spec = findSpec(key, kBoth);
  if(!spec || !*spec->defaultYaml)
    return false;
  return valueText(key, typed(*spec, value, "")) == valueText(key, typed(*spec, YAML::Load(spec->defaultYaml), ""));
}

std::string valueText(const std::string& key, const YAML::Node& value) {
  const Spec* spec = findSpec(key, kTrain);
  auto scalar = [&](const YAML::Node& v) -> std::string {
    if(!v.IsScalar())
      return YAML::Dump(v);
    if(!spec || !scalarConverts(v, spec->type.kind))
      return v.Scalar();
    switch(spec->type.kind) {
      case Kind::Flag: return v.as<bool>() ? "true" : "false";
      case Kind::Int: case Kind::Ints: return std::to_string(v.as<long long>());
      case Kind::Float: case Kind::Floats: {
        char text[32];
        std::to_chars_result end = std::to_chars(text, text + sizeof text, v.as<double>(), std::chars_format::general);
        return std::string(text, end.ptr);
      }
      default: return v.Scalar();
    }
  };
  if(!value.IsSequence())
    return scalar(value);
  std::string list;
  for(const YAML::Node& item : value)
    list += (list.empty() ? "" : ", ") + scalar(item);
  return "[" + list + "]";
}
}  // namespace option_table
}  // namespace marian
