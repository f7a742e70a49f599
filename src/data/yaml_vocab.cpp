// Marian's default vocabulary: a YAML map word -> id over whitespace-separated tokens.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "common/error.h"
#include "common/file_util.h"
#include "data/vocab.h"

namespace marian {

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while(in >> w)
    out.push_back(w);
  return out;
}

class YamlVocab : public Vocab {
public:
  explicit YamlVocab(const std::string& path) : path_(path) {
    ABORT_IF(isDirectory(path), "Vocabulary '{}' is a directory, not a file", path);
    YAML::Node map;
    try {
      map = YAML::LoadFile(path);
    } catch(const YAML::Exception& e) {
      ABORT("Vocabulary '{}' is not valid YAML: {}", path, e.what());
    }
    ABORT_IF(!map.IsMap(), "Vocabulary '{}' must be a YAML map of word: id", path);
    // Ids are 0 .. N-1 for N words, each word and each id once: a gap would make ids that no
    // word has (and a huge id a huge table), a duplicate would make two words one.
    size_t n = map.size();
    std::unordered_map<std::string, int> lineOf;  // of each word, for errors
    std::vector<int> idLine;                      // the line of each id's word
    std::vector<bool> used;                       // ids taken
    try {
      for(auto it = map.begin(); it != map.end(); ++it) {
        int line = it->first.Mark().line + 1;
        ABORT_IF(!it->first.IsScalar(), "Vocabulary '{}', line {}: a key is not a word (a {})", path, line,
                 it->first.IsMap() ? "map" : it->first.IsSequence() ? "sequence" : "null");
        std::string word = it->first.Scalar();
        auto [seen, fresh] = lineOf.emplace(word, line);
        ABORT_IF(!fresh, "Vocabulary '{}', line {}: word '{}' appears twice (first at line {})", path, line, word,
                 seen->second);
        long long id = -1;
        bool integer = it->second.IsScalar();
        if(integer) {
          try {
            id = it->second.as<long long>();
          } catch(const YAML::Exception&) {
            integer = false;
          }
        }
        ABORT_IF(!integer, "Vocabulary '{}', line {}: word '{}' has a non-integer id '{}'", path, line, word,
                 it->second.IsScalar() ? it->second.Scalar() : std::string("(not a scalar)"));
        ABORT_IF(id < 0, "Vocabulary '{}', line {}: word '{}' has negative id {}", path, line, word, id);
        ABORT_IF(size_t(id) >= n,
                 "Vocabulary '{}', line {}: word '{}' has id {}, but the {} words must have ids 0 to {} (no gaps)",
                 path, line, word, id, n, n - 1);
        if(words_.size() < n) {
          words_.resize(n);
          idLine.resize(n, 0);
          used.resize(n, false);
        }
        ABORT_IF(used[size_t(id)], "Vocabulary '{}', line {}: word '{}' has id {}, which word '{}' (line {}) has too",
                 path, line, word, id, words_[size_t(id)], idLine[size_t(id)]);
        used[size_t(id)] = true;
        idLine[size_t(id)] = line;
        words_[size_t(id)] = word;
        ids_[word] = int(id);
      }
    } catch(const YAML::Exception& e) {  // yaml-cpp's own, e.g. a node it cannot iterate
      ABORT("Vocabulary '{}' is malformed: {}", path, e.what());
    }
    ABORT_IF(words_.size() < 2 || words_[kEos] != "</s>" || words_[kUnk] != "<unk>",
             "Vocabulary '{}' must map </s> to 0 and <unk> to 1", path);
  }

  std::vector<int> encode(const std::string& line, bool addEos) const override {
    std::vector<int> ids;
    for(const std::string& w : tokens(line)) {
      auto it = ids_.find(w);
      ids.push_back(it == ids_.end() ? kUnk : it->second);
    }
    if(addEos)
      ids.push_back(kEos);
    return ids;
  }

  std::string decode(const std::vector<int>& ids) const override {
    std::string out;
    for(int id : ids) {
      if(id == kEos)
        break;
      if(!out.empty())
        out += ' ';
      out += id >= 0 && size_t(id) < words_.size() ? words_[id] : "<unk>";
    }
    return out;
  }

  size_t size() const override { return words_.size(); }
  std::string path() const override { return path_; }

private:
  std::string path_;
  std::vector<std::string> words_;
  std::unordered_map<std::string, int> ids_;
};

}  // namespace

void countWords(const std::string& line, std::unordered_map<std::string, size_t>& counts) {
  for(const std::string& w : tokens(line))
    if(w != "</s>" && w != "<unk>")
      ++counts[w];
}

std::string buildYamlVocab(const std::vector<std::string>& lines, size_t maxSize) {
  std::unordered_map<std::string, size_t> counts;
  for(const std::string& line : lines)
    countWords(line, counts);
  return buildYamlVocab(counts, maxSize);
}

std::string buildYamlVocab(const std::unordered_map<std::string, size_t>& counts, size_t maxSize) {
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if(maxSize > 2 && sorted.size() > maxSize - 2)
    sorted.resize(maxSize - 2);
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "</s>" << YAML::Value << 0 << YAML::Key << "<unk>"
      << YAML::Value << 1;
  int id = 2;
  for(const auto& [word, count] : sorted)
    out << YAML::Key << word << YAML::Value << id++;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::unique_ptr<Vocab> loadYamlVocab(const std::string& path) {
  return std::make_unique<YamlVocab>(path);
}

}  // namespace marian
