#pragma once
// defines: marian::Vocab — text <-> word ids, for both kinds: SentencePiece (.spm) and Marian's
// word vocabularies (a YAML map word: id in .yml/.yaml/.json, or one word a line under any other
// name). As in Marian, </s> and <unk> have the ids the file gives them (0 and 1 when Marian or
// this program made it; spm_train's defaults are <unk> = 0, </s> = 2).
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace marian {

class Vocab {
public:
  static constexpr int kEos = 0;  // in the vocabularies Marian and this program make
  static constexpr int kUnk = 1;

  virtual ~Vocab() = default;
  // Ids of a line of text, with </s> appended when addEos.
  virtual std::vector<int> encode(const std::string& line, bool addEos = true) const = 0;
  // Text of ids; stops at the first </s>.
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  // The same with lines of the vocabulary's own units separated by spaces (SentencePiece's
  // pieces; a word vocabulary's units are its words, so there they are encode and decode).
  virtual std::vector<int> encodeUnits(const std::string& line, bool addEos = true) const { return encode(line, addEos); }
  virtual std::string decodeUnits(const std::vector<int>& ids) const { return decode(ids); }
  virtual size_t size() const = 0;
  virtual int eosId() const { return kEos; }
  virtual int unkId() const { return kUnk; }
  virtual std::string path() const = 0;
};

// A view of `vocab` whose encode and decode read and write its units (Marian's --no-spm-encode
// for the source, --no-spm-decode for the target).
std::shared_ptr<Vocab> unitsOf(std::shared_ptr<Vocab> vocab);

// How a missing vocabulary is made: which TAB fields of a --tsv corpus's lines it learns from
// (empty: whole lines), and for SentencePiece Marian's --sentencepiece-max-lines, its extra
// --sentencepiece-options for spm_train, and --tempdir for the sampled lines.
struct VocabTraining {
  size_t maxLines = 2000000;
  std::string sentencepieceOptions;
  std::string tempDir = "/tmp";
  std::vector<size_t> tsvFields;
};

// Loads the vocabulary at `path` (kind from its name: .spm SentencePiece, .yml/.yaml/.json a YAML
// word map, anything else a word a line); if the file does not exist yet, creates it from
// `trainFiles` (all of them: a joint vocabulary) with at most maxSize entries (0: no limit for
// word vocabularies, 32000 for SentencePiece), as Marian does.
std::shared_ptr<Vocab> loadOrCreateVocab(const std::string& path, const std::vector<std::string>& trainFiles,
                                         size_t maxSize, const VocabTraining& training = {});
// Each line of the training files as a missing vocabulary learns from it (training.tsvFields).
void forEachTrainingLine(const std::vector<std::string>& trainFiles, const VocabTraining& training,
                         const std::function<void(std::string& line)>& onLine);

// A word vocabulary's files: Marian's YAML map, or a word a line.
enum class WordVocabFormat { yaml, text };
// Builds a YAML word vocabulary (frequency order, ties alphabetical, after </s> and <unk>) from
// lines of text.
std::string buildYamlVocab(const std::vector<std::string>& lines, size_t maxSize);
// The same from word counts gathered a line at a time (countWords), for a corpus of any size.
void countWords(const std::string& line, std::unordered_map<std::string, size_t>& counts);
std::string buildWordVocab(const std::unordered_map<std::string, size_t>& counts, size_t maxSize,
                           WordVocabFormat format);

}  // namespace marian
