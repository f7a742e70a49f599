// Marian's default vocabulary: words (whitespace-separated tokens) and their ids, read from a
// YAML map word -> id (.yml, .yaml, .json) or from a text file of one word per line (any other
// name; a word's id is its line's index). As in Marian, </s> and <unk> may have any ids.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "data/text_file.h"
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

// The words of a YAML map word -> id, by id. Ids are 0 .. N-1 for N entries, each id once (a huge
// id would make a huge table, an id twice two words one). A word twice keeps its first id, as
// Marian's loader (whose vocabulary maker writes </s> and <unk> again when the corpus holds them);
// its other id has no word ("", as Marian's).
std::vector<std::string> readYamlWords(const std::string& path) {
  YAML::Node map;
  try {
    map = YAML::LoadFile(path);
  } catch(const YAML::Exception& e) {
    ABORT("Vocabulary '{}' is not valid YAML: {}", path, e.what());
  }
  ABORT_IF(!map.IsMap(), "Vocabulary '{}' must be a YAML map of word: id", path);
  size_t n = map.size();
  std::vector<std::string> words;
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
      if(words.size() < n) {
        words.resize(n);
        idLine.resize(n, 0);
        used.resize(n, false);
      }
      ABORT_IF(used[size_t(id)], "Vocabulary '{}', line {}: word '{}' has id {}, which word '{}' (line {}) has too",
               path, line, word, id, words[size_t(id)], idLine[size_t(id)]);
      used[size_t(id)] = true;
      idLine[size_t(id)] = line;
      if(!fresh) {
        LOG(warn, "[data] Vocabulary '{}', line {}: word '{}' appears again (first at line {}): its first id is kept, "
                  "as Marian's, and id {} has no word",
            path, line, word, seen->second, id);
        continue;
      }
      words[size_t(id)] = word;
    }
  } catch(const YAML::Exception& e) {  // yaml-cpp's own, e.g. a node it cannot iterate
    ABORT("Vocabulary '{}' is malformed: {}", path, e.what());
  }
  return words;
}

// The words of a text file, one a line (plain or .gz; a CR before the line end dropped).
std::vector<std::string> readTextWords(const std::string& path) {
  std::vector<std::string> words = readLines(path, "Vocabulary");
  std::unordered_map<std::string, size_t> lineOf;
  for(size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    ABORT_IF(word.empty(), "Vocabulary '{}', line {}: an empty line (a word vocabulary has one word a line)", path,
             i + 1);
    // lines are split at spaces into words, so such an entry would never be read: a file of
    // another kind (SentencePiece's word<TAB>score .vocab, say)
    ABORT_IF(word.find_first_of(" \t\v\f") != std::string::npos,
             "Vocabulary '{}', line {}: '{}' is not one word (a word vocabulary has one word a line, without spaces "
             "or TABs)",
             path, i + 1, word);
    auto [seen, fresh] = lineOf.emplace(word, i + 1);
    ABORT_IF(!fresh, "Vocabulary '{}', line {}: word '{}' appears twice (first at line {})", path, i + 1, word,
             seen->second);
  }
  return words;
}

class WordVocab : public Vocab {
public:
  WordVocab(const std::string& path, bool yaml) : path_(path) {
    ABORT_IF(isDirectory(path), "Vocabulary '{}' is a directory, not a file", path);
    words_ = yaml ? readYamlWords(path) : readTextWords(path);
    ABORT_IF(words_.empty(), "Vocabulary '{}' is empty", path);
    for(size_t id = 0; id < words_.size(); ++id)
      if(!words_[id].empty() || !yaml)  // (an id without a word: a word's second entry)
        ids_.emplace(words_[id], int(id));
    // Nematus's YAML names (or no word), accepted by Marian at ids 0 and 1
    eos_ = requiredId("</s>", yaml && (words_[0] == "eos" || words_[0].empty()) ? 0 : -1);
    unk_ = requiredId("<unk>", yaml && words_.size() > 1 && (words_[1] == "UNK" || words_[1].empty()) ? 1 : -1);
  }

  std::vector<int> encode(const std::string& line, bool addEos) const override {
    std::vector<int> ids;
    for(const std::string& w : tokens(line)) {
      auto it = ids_.find(w);
      ids.push_back(it == ids_.end() ? unk_ : it->second);
    }
    if(addEos)
      ids.push_back(eos_);
    return ids;
  }

  std::string decode(const std::vector<int>& ids) const override {
    std::string out;
    for(int id : ids) {
      if(id == eos_)
        break;
      if(!out.empty())
        out += ' ';
      out += id >= 0 && size_t(id) < words_.size() ? words_[size_t(id)] : words_[size_t(unk_)];
    }
    return out;
  }

  size_t size() const override { return words_.size(); }
  int eosId() const override { return eos_; }
  int unkId() const override { return unk_; }
  std::string path() const override { return path_; }

private:
  int requiredId(const std::string& word, int nematusId) const {
    if(nematusId >= 0)
      return nematusId;
    auto it = ids_.find(word);
    ABORT_IF(it == ids_.end(), "Vocabulary '{}' has no entry for {} (a word vocabulary needs </s> and <unk>)", path_,
             word);
    return it->second;
  }

  std::string path_;
  std::vector<std::string> words_;
  std::unordered_map<std::string, int> ids_;
  int eos_ = kEos, unk_ = kUnk;
};

// The words by frequency (ties alphabetical), at most maxSize with </s> and <unk> first.
std::vector<std::string> wordsByFrequency(const std::unordered_map<std::string, size_t>& counts, size_t maxSize) {
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if(maxSize > 2 && sorted.size() > maxSize - 2)
    sorted.resize(maxSize - 2);
  std::vector<std::string> words{"</s>", "<unk>"};
  for(const auto& [word, count] : sorted)
    words.push_back(word);
  return words;
}

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
  return buildWordVocab(counts, maxSize, WordVocabFormat::yaml);
}

std::string buildWordVocab(const std::unordered_map<std::string, size_t>& counts, size_t maxSize,
                           WordVocabFormat format) {
  std::vector<std::string> words = wordsByFrequency(counts, maxSize);
  if(format == WordVocabFormat::text) {
    std::string out;
    for(const std::string& w : words)
      out += w + "\n";
    return out;
  }
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(size_t id = 0; id < words.size(); ++id)
    out << YAML::Key << words[id] << YAML::Value << id;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::unique_ptr<Vocab> loadWordVocab(const std::string& path, WordVocabFormat format) {
  return std::make_unique<WordVocab>(path, format == WordVocabFormat::yaml);
}

}  // namespace marian
