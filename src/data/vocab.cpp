#include "data/vocab.h"

#include <fstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "data/text_file.h"

namespace marian {

std::unique_ptr<Vocab> loadYamlVocab(const std::string& path);
std::unique_ptr<Vocab> loadSentencePieceVocab(const std::string& path);
void trainSentencePieceVocab(const std::string& path, const std::vector<std::string>& trainFiles,
                             size_t maxSize);

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool isSentencePiece(const std::string& path) { return endsWith(path, ".spm"); }
bool isYaml(const std::string& path) {
  return endsWith(path, ".yml") || endsWith(path, ".yaml") || endsWith(path, ".json");
}
}  // namespace

std::shared_ptr<Vocab> loadOrCreateVocab(const std::string& path,
                                         const std::vector<std::string>& trainFiles, size_t maxSize) {
  ABORT_IF(!isSentencePiece(path) && !isYaml(path),
           "Vocabulary '{}': unknown kind; use .spm (SentencePiece) or .yml (word list)", path);
  if(!std::ifstream(path).good()) {
    ABORT_IF(trainFiles.empty(), "Vocabulary '{}' does not exist", path);
    if(isSentencePiece(path)) {
      trainSentencePieceVocab(path, trainFiles, maxSize);
    } else {
      std::vector<std::string> lines;
      for(const std::string& f : trainFiles)
        for(std::string& l : readLines(f, "Training file"))
          lines.push_back(std::move(l));
      // each process (MPI rank) writes its own temporary file; the renames are atomic and the
      // contents identical, so ranks creating the same vocabulary at once do not collide
      writeFileAtomic(path, buildYamlVocab(lines, maxSize));
      LOG(info, "[data] Created vocabulary '{}' from {} lines", path, lines.size());
    }
  }
  std::shared_ptr<Vocab> vocab;
  if(isSentencePiece(path))
    vocab = loadSentencePieceVocab(path);
  else
    vocab = loadYamlVocab(path);
  LOG(info, "[data] Loaded vocabulary '{}' ({} entries)", path, vocab->size());
  return vocab;
}

}  // namespace marian
