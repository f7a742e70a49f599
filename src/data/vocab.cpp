#include "data/vocab.h"

#include <algorithm>
#include <fstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "data/text_file.h"
#include "data/text_output.h"

namespace marian {

std::unique_ptr<Vocab> loadWordVocab(const std::string& path, WordVocabFormat format);
std::unique_ptr<Vocab> loadSentencePieceVocab(const std::string& path);
void trainSentencePieceVocab(const std::string& path, const std::vector<std::string>& trainFiles,
                             size_t maxSize, const VocabTraining& training);

namespace {
bool isSentencePiece(const std::string& path) { return endsWith(path, ".spm"); }
WordVocabFormat wordVocabFormat(const std::string& path) {
  bool yaml = endsWith(path, ".yml") || endsWith(path, ".yaml") || endsWith(path, ".json");
  return yaml ? WordVocabFormat::yaml : WordVocabFormat::text;
}

// A word vocabulary of `size` ids, as Marian loads one with --dim-vocabs: smaller than the file,
// its first ids (later words read as <unk>); larger, the file's ids and more that no word has (the
// model's embeddings and output have --dim-vocabs rows; such an id decodes as <unk>).
class SizedVocab : public Vocab {
public:
  SizedVocab(std::shared_ptr<Vocab> full, size_t size) : full_(std::move(full)), size_(size) {}
  std::vector<int> encode(const std::string& line, bool addEos) const override {
    std::vector<int> ids = full_->encode(line, addEos);
    for(int& id : ids)
      if(size_t(id) >= size_)
        id = full_->unkId();
    return ids;
  }
  std::string decode(const std::vector<int>& ids) const override { return full_->decode(ids); }
  size_t size() const override { return size_; }
  int eosId() const override { return full_->eosId(); }
  int unkId() const override { return full_->unkId(); }
  std::string path() const override { return full_->path(); }

private:
  std::shared_ptr<Vocab> full_;
  size_t size_;
};

// encode and decode through the units (unitsOf)
class UnitsVocab : public Vocab {
public:
  explicit UnitsVocab(std::shared_ptr<Vocab> vocab) : vocab_(std::move(vocab)) {}
  std::vector<int> encode(const std::string& line, bool addEos) const override { return vocab_->encodeUnits(line, addEos); }
  std::string decode(const std::vector<int>& ids) const override { return vocab_->decodeUnits(ids); }
  size_t size() const override { return vocab_->size(); }
  int eosId() const override { return vocab_->eosId(); }
  int unkId() const override { return vocab_->unkId(); }
  std::string path() const override { return vocab_->path(); }

private:
  std::shared_ptr<Vocab> vocab_;
};
}  // namespace

std::shared_ptr<Vocab> unitsOf(std::shared_ptr<Vocab> vocab) { return std::make_shared<UnitsVocab>(std::move(vocab)); }

void forEachTrainingLine(const std::vector<std::string>& trainFiles, const VocabTraining& training,
                         const std::function<void(std::string& line)>& onLine) {
  for(const std::string& f : trainFiles)
    forEachLine(f, "Training file", [&](std::string& line) {
      if(!training.tsvFields.empty()) {  // the fields asked for, joined by a space
        std::vector<std::string> fields;
        for(size_t begin = 0;;) {
          size_t end = line.find('\t', begin);
          fields.push_back(line.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
          if(end == std::string::npos)
            break;
          begin = end + 1;
        }
        std::string text;
        for(size_t k : training.tsvFields)
          if(k < fields.size())
            text += (text.empty() ? "" : " ") + fields[k];
        line = std::move(text);
      }
      onLine(line);
    });
}

std::shared_ptr<Vocab> loadOrCreateVocab(const std::string& path, const std::vector<std::string>& trainFiles,
                                         size_t maxSize, const VocabTraining& training) {
  ABORT_IF(endsWith(path, ".fsv"), "Vocabulary '{}': Marian's factored vocabularies (.fsv) are not implemented",
           path);
  if(!std::ifstream(path).good()) {
    ABORT_IF(trainFiles.empty(), "Vocabulary '{}' does not exist", path);
    if(isSentencePiece(path)) {
      trainSentencePieceVocab(path, trainFiles, maxSize, training);
    } else {
      // counted a line at a time: the corpus may be larger than memory
      std::unordered_map<std::string, size_t> counts;
      size_t lines = 0;
      bool anyWord = false;
      forEachTrainingLine(trainFiles, training, [&](std::string& l) {
        ++lines;
        anyWord = anyWord || l.find_first_not_of(" \t\r") != std::string::npos;
        countWords(l, counts);
      });
      // each process (MPI rank) writes its own temporary file; the renames are atomic and the
      // contents identical, so ranks creating the same vocabulary at once do not collide
      std::string built = buildWordVocab(counts, maxSize, wordVocabFormat(path));
      // </s> and <unk> alone: an empty corpus would leave a vocabulary that makes every later
      // run on real data train an all-<unk> model
      ABORT_IF(!anyWord, "Cannot create vocabulary '{}': the training files ({}) contain no words", path,
               trainFiles.front() + (trainFiles.size() > 1 ? ", " + trainFiles.back() : ""));
      writeTextFile(path, built);  // (gzip-compressed for a .gz name, as Marian's)
      LOG(info, "[data] Created vocabulary '{}' from {} lines", path, lines);
    }
  }
  std::shared_ptr<Vocab> vocab;
  if(isSentencePiece(path))
    vocab = loadSentencePieceVocab(path);
  else
    vocab = loadWordVocab(path, wordVocabFormat(path));
  LOG(info, "[data] Loaded vocabulary '{}' ({} entries)", path, vocab->size());
  if(maxSize > vocab->size() && !isSentencePiece(path)) {  // (SentencePiece: its own size, as Marian)
    LOG(warn, "[data] The vocabulary '{}' has {} entries, --dim-vocabs (or the model's dim-vocabs) {}: as Marian, the "
              "model has {} rows and the ids past the file's have no word",
        path, vocab->size(), maxSize, maxSize);
    return std::make_shared<SizedVocab>(vocab, maxSize);
  }
  if(maxSize != 0 && vocab->size() > maxSize) {
    ABORT_IF(isSentencePiece(path),
             "--dim-vocabs {} but the SentencePiece vocabulary '{}' has {} entries: give {} or 0, or remove the "
             "file to train one of {}",
             maxSize, path, vocab->size(), vocab->size(), maxSize);
    for(const auto& [name, id] : {std::pair{"</s>", vocab->eosId()}, std::pair{"<unk>", vocab->unkId()}})
      ABORT_IF(size_t(id) >= maxSize, "--dim-vocabs {} cuts {} (id {}) out of the vocabulary '{}': give more than {}",
               maxSize, name, id, path, id);
    LOG(info, "[data] Using the first {} entries of '{}' (--dim-vocabs); later words read as <unk>", maxSize, path);
    vocab = std::make_shared<SizedVocab>(vocab, maxSize);
  }
  return vocab;
}

}  // namespace marian
