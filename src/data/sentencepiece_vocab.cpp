// SentencePiece vocabularies through libsentencepiece, with the ids of </s> and <unk> the model
// gives them (as Marian); trained in-process when missing, with Marian's (</s> = 0, <unk> = 1,
// no <s>).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "data/vocab.h"

namespace marian {

namespace {

class SentencePieceVocab : public Vocab {
public:
  explicit SentencePieceVocab(const std::string& path) : path_(path) {
    auto status = spm_.Load(path);
    ABORT_IF(!status.ok(), "SentencePiece vocabulary '{}' cannot be loaded: {}", path, status.ToString());
    eos_ = spm_.PieceToId("</s>");
    unk_ = spm_.unk_id();
    ABORT_IF(spm_.IdToPiece(eos_) != "</s>",
             "SentencePiece vocabulary '{}' has no </s> piece (trained with --eos_id=-1?): sentences need an end",
             path);
  }

  int eosId() const override { return eos_; }
  int unkId() const override { return unk_; }

  std::vector<int> encode(const std::string& line, bool addEos) const override {
    std::vector<int> ids;
    auto status = spm_.Encode(line, &ids);
    ABORT_IF(!status.ok(), "SentencePiece '{}' cannot encode a line: {}", path_, status.ToString());
    if(addEos)
      ids.push_back(eos_);
    return ids;
  }

  std::string decode(const std::vector<int>& ids) const override {
    std::vector<int> upToEos;
    for(int id : ids) {
      if(id == eos_)
        break;
      upToEos.push_back(id);
    }
    std::string out;
    auto status = spm_.Decode(upToEos, &out);
    ABORT_IF(!status.ok(), "SentencePiece '{}' cannot decode: {}", path_, status.ToString());
    return out;
  }

  std::vector<int> encodeUnits(const std::string& line, bool addEos) const override {
    std::vector<int> ids;
    std::istringstream pieces(line);
    for(std::string piece; pieces >> piece;)
      ids.push_back(spm_.PieceToId(piece));  // <unk>'s id for a piece it does not have
    if(addEos)
      ids.push_back(eos_);
    return ids;
  }

  std::string decodeUnits(const std::vector<int>& ids) const override {
    std::string out;
    for(int id : ids) {
      if(id == eos_)
        break;
      out += (out.empty() ? "" : " ") + spm_.IdToPiece(id);
    }
    return out;
  }

  size_t size() const override { return size_t(spm_.GetPieceSize()); }
  std::string path() const override { return path_; }

private:
  std::string path_;
  sentencepiece::SentencePieceProcessor spm_;
  int eos_ = kEos, unk_ = kUnk;
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
  forEachTrainingLine(trainFiles, training, [&](std::string& line) {  // a corpus of any size: one line at a time
    ++seen;
    if(sample.size() < maxLines) {
      sample.push_back(std::move(line));
    } else {
      size_t j = std::uniform_int_distribution<size_t>(0, seen - 1)(rng);
      if(j < maxLines)
        sample[j] = std::move(line);
    }
  });
  std::string tmp = atomicTempPath(path);
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
  // Marian's special ids and settings, each unless --sentencepiece-options sets it (the trainer
  // keeps the first value of a flag given twice): --unk_id=0 --bos_id=1 --eos_id=2 gives spm_train's
  std::string args = "--input=" + sampleFile + " --model_prefix=" + tmp + " " + training.sentencepieceOptions;
  for(std::string flag : {"--vocab_size=" + std::to_string(vocabSize), std::string("--bos_id=-1"), std::string("--eos_id=0"),
                          std::string("--unk_id=1"), std::string("--character_coverage=1.0"), std::string("--minloglevel=2"),
                          std::string("--num_threads=2")}) {
    std::string name = flag.substr(0, flag.find('='));
    if(training.sentencepieceOptions.find(name + "=") == std::string::npos &&
       training.sentencepieceOptions.find(name + " ") == std::string::npos)
      args += " " + flag;
  }
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
