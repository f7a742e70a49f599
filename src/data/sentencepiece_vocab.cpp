// SentencePiece vocabularies through libsentencepiece; trained in-process when missing, with
// Marian's special ids (</s> = 0, <unk> = 1, no <s>).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "common/logging.h"
#include "data/text_file.h"
#include "data/vocab.h"

namespace marian {

namespace {

class SentencePieceVocab : public Vocab {
public:
  explicit SentencePieceVocab(const std::string& path) : path_(path) {
    auto status = spm_.Load(path);
    ABORT_IF(!status.ok(), "SentencePiece vocabulary '{}' cannot be loaded: {}", path, status.ToString());
    ABORT_IF(spm_.PieceToId("</s>") != kEos || spm_.unk_id() != kUnk,
             "SentencePiece vocabulary '{}' must have </s> = 0 and <unk> = 1 (train it with "
             "--eos_id=0 --unk_id=1 --bos_id=-1)",
             path);
  }

  std::vector<int> encode(const std::string& line, bool addEos) const override {
    std::vector<int> ids;
    auto status = spm_.Encode(line, &ids);
    ABORT_IF(!status.ok(), "SentencePiece '{}' cannot encode a line: {}", path_, status.ToString());
    if(addEos)
      ids.push_back(kEos);
    return ids;
  }

  std::string decode(const std::vector<int>& ids) const override {
    std::vector<int> upToEos;
    for(int id : ids) {
      if(id == kEos)
        break;
      upToEos.push_back(id);
    }
    std::string out;
    auto status = spm_.Decode(upToEos, &out);
    ABORT_IF(!status.ok(), "SentencePiece '{}' cannot decode: {}", path_, status.ToString());
    return out;
  }

  size_t size() const override { return size_t(spm_.GetPieceSize()); }
  std::string path() const override { return path_; }

private:
  std::string path_;
  sentencepiece::SentencePieceProcessor spm_;
};

}  // namespace

std::unique_ptr<Vocab> loadSentencePieceVocab(const std::string& path) {
  return std::make_unique<SentencePieceVocab>(path);
}

void trainSentencePieceVocab(const std::string& path, const std::vector<std::string>& trainFiles,
                             size_t maxSize, const VocabTraining& training) {
  // Reservoir-sample up to --sentencepiece-max-lines lines into a plain text file in --tempdir:
  // the trainer reads neither .gz nor several files with a joint sample.
  const size_t maxLines = training.maxLines;
  std::vector<std::string> sample;
  std::mt19937_64 rng(1234);
  size_t seen = 0;
  for(const std::string& f : trainFiles) {
    for(std::string& line : readLines(f, "Training file")) {
      ++seen;
      if(sample.size() < maxLines) {
        sample.push_back(std::move(line));
      } else {
        size_t j = std::uniform_int_distribution<size_t>(0, seen - 1)(rng);
        if(j < maxLines)
          sample[j] = std::move(line);
      }
    }
  }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  std::string sampleFile = (std::filesystem::path(training.tempDir) /
                            ("marian-spm-sample." + std::to_string(getpid()) + ".txt")).string();
  {
    // the vocabulary's folder is created, as the model's is (they need not be the same)
    std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if(!folder.empty())
      std::filesystem::create_directories(folder, ec);
    std::ofstream out(sampleFile);
    ABORT_IF(!out, "Cannot write '{}' (--tempdir) to train the SentencePiece vocabulary", sampleFile);
    for(const std::string& line : sample)
      out << line << '\n';
  }
  size_t vocabSize = maxSize ? maxSize : 32000;
  LOG(info, "[data] Training SentencePiece vocabulary '{}' of {} pieces on {} lines", path, vocabSize,
      sample.size());
  // --sentencepiece-options come last: spm_train takes the last value of a flag given twice,
  // but the special ids stay Marian's (checked when the vocabulary loads)
  std::string args = "--input=" + sampleFile + " --model_prefix=" + tmp +
                     " --vocab_size=" + std::to_string(vocabSize) +
                     " --bos_id=-1 --eos_id=0 --unk_id=1 --character_coverage=1.0"
                     " --minloglevel=2 --num_threads=2 " + training.sentencepieceOptions;
  auto status = sentencepiece::SentencePieceTrainer::Train(args);
  std::remove(sampleFile.c_str());
  std::remove((tmp + ".vocab").c_str());
  if(!status.ok()) {
    std::remove((tmp + ".model").c_str());
    ABORT("Training the SentencePiece vocabulary '{}' failed: {}", path, status.ToString());
  }
  ABORT_IF(std::rename((tmp + ".model").c_str(), path.c_str()) != 0, "Cannot write vocabulary '{}'", path);
}

}  // namespace marian
