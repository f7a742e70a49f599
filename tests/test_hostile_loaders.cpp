// Hostile files given to the loaders (issue 19): corrupt and truncated .gz corpora, YAML
// vocabularies with duplicate words, gaps or huge ids, and malformed progress files and checkpoint
// states (.npz model files: test_hostile_npz.cpp). Each is
// an Error whose message names the file (and the array, word or key, with its line), never a
// crash, a huge allocation or garbage in the message. fuzz/regressions/ holds the inputs the
// fuzzers found; RegressionInputs below feeds every one of them to its loader.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "common/error.h"
#include "common/npz.h"
#include "hostile_files.h"
#include "wire_records.h"
#include "data/corpus_chunks.h"
#include "data/text_file.h"
#include "data/vocab.h"
#include "training/loop/checkpoint.h"
#include "training/loop/training_state.h"

namespace marian {
namespace {

using namespace hostile;

// --- .gz corpora --------------------------------------------------------------------------

std::string gzipped(const std::string& text) {
  std::string path = temp("gzipped.tmp.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
  std::string bytes = readAll(path);
  std::remove(path.c_str());
  return bytes;
}

std::string manyLines() {  // varied enough that the compressed stream is long
  std::mt19937 rng(7);
  std::string text;
  for(int i = 0; i < 20000; ++i)
    text += "line " + std::to_string(rng()) + " of " + std::to_string(rng() % 1000) + "\n";
  return text;
}

TEST(HostileGzip, TruncatedFileIsNamedWithoutGarbage) {
  std::string gz = gzipped(manyLines());
  std::string path = temp("truncated.txt.gz");
  for(size_t keep : {gz.size() / 2, gz.size() - 4, size_t(12)}) {
    writeAll(path, gz.substr(0, keep));
    expectError([&] { readLines(path, "Corpus file"); }, {"Corpus file", path, "corrupt or truncated"});
  }
}

TEST(HostileGzip, CorruptDataAndChecksumAreNamedWithoutGarbage) {
  std::string gz = gzipped(manyLines());
  std::string path = temp("corrupt.txt.gz");
  std::string bad = gz;
  for(size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i)
    bad[i] = char(~bad[i]);
  writeAll(path, bad);
  expectError([&] { readLines(path, "Corpus file"); }, {path, "corrupt"});
  bad = gz;
  bad[bad.size() - 6] = char(bad[bad.size() - 6] ^ 0x55);  // the CRC-32 in the trailer
  writeAll(path, bad);
  expectError([&] { readLines(path, "Corpus file"); }, {path, "corrupt"});
}

TEST(HostileGzip, ADirectoryIsNamed) {
  std::string dir = temp("corpus-dir");
  std::filesystem::create_directories(dir);
  expectError([&] { readLines(dir, "Corpus file"); }, {dir, "directory"});
}

// --- YAML vocabularies ---------------------------------------------------------------------

std::string vocabFile(const std::string& name, const std::string& text) {
  std::string path = temp(name);
  writeAll(path, text);
  return path;
}

const char* kTenWords = "</s>: 0\n<unk>: 1\na: 2\nb: 3\nc: 4\nd: 5\ne: 6\nf: 7\ng: 8\n";

// As Marian's loader: a word twice keeps its first id, the other has no word (Marian's vocabulary
// maker writes </s> and <unk> again when the corpus holds them literally); twice in a text
// vocabulary is an error, as Marian's.
TEST(HostileVocab, AWordTwiceKeepsItsFirstIdAsMarians) {
  std::string path = vocabFile("dup.yml", "</s>: 0\n<unk>: 1\nthe: 2\ncat: 3\n<unk>: 4\nthe: 5\n");
  auto v = loadOrCreateVocab(path, {}, 0);
  EXPECT_EQ(v->size(), 6u);
  EXPECT_EQ(v->unkId(), 1);
  EXPECT_EQ(v->encode("the cat <unk> dog", false), (std::vector<int>{2, 3, 1, 1}));
  EXPECT_EQ(v->decode({2, 5, 3}), "the  cat");  // id 5 has no word
  std::string text = vocabFile("dup.txt", "</s>\n<unk>\nthe\ncat\nthe\n");
  expectError([&] { loadOrCreateVocab(text, {}, 0); }, {text, "line 5", "'the'", "twice", "line 3"});
}

TEST(HostileVocab, GapsAndHugeIdsAreNamedNotAllocated) {
  std::string path = vocabFile("gap.yml", std::string(kTenWords) + "the: 999\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 10", "'the'", "999", "0 to 9"});
  path = vocabFile("huge.yml", std::string(kTenWords) + "the: 2000000000\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 10", "'the'", "2000000000"});
  path = vocabFile("huger.yml", std::string(kTenWords) + "the: 99999999999999999999\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 10", "'the'", "non-integer"});
}

TEST(HostileVocab, NegativeNonIntegerAndDuplicateIdsAreNamed) {
  std::string path = vocabFile("neg.yml", std::string(kTenWords) + "the: -3\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 10", "'the'", "negative id -3"});
  for(std::string id : {"1.5", "abc", "[1]", "{a: 1}", "", "true"}) {
    path = vocabFile("nonint.yml", std::string(kTenWords) + "the: " + id + "\n");
    expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 10", "'the'", "non-integer"});
  }
  path = vocabFile("twice.yml", "</s>: 0\n<unk>: 1\na: 2\nb: 2\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 4", "'b'", "id 2", "'a'", "line 3"});
  path = vocabFile("key.yml", "</s>: 0\n<unk>: 1\n[x, y]: 2\n");
  expectError([&] { loadOrCreateVocab(path, {}, 0); }, {path, "line 3", "not a word"});
}

TEST(HostileVocab, ADirectoryIsNamedAndAGoodVocabularyStillLoads) {
  std::string dir = temp("vocab-dir.yml");
  std::filesystem::create_directories(dir);
  expectError([&] { loadOrCreateVocab(dir, {}, 0); }, {dir, "directory"});
  std::string path = vocabFile("good.yml", buildYamlVocab({"null ~ yes true 1 0x10 - : [a] {b} 'q' # &x *y !z"}, 0));
  auto v = loadOrCreateVocab(path, {}, 0);
  EXPECT_EQ(v->size(), 17u);
  EXPECT_EQ(v->decode(v->encode("null ~ yes [a] #")), "null ~ yes [a] #");
}

// --- progress files and checkpoint states -----------------------------------------------------

const std::string kProgress =
    "epochs: 2\nbatches: 30\nbatches-epoch: 10\ncorpus-batches-epoch: 10\ncorpus-sentences-epoch: 640\n"
    "batching: --mini-batch 64\ncorpus: 2000 lines; 51,003 bytes, CRC-32 0a1b2c3d; 47,110 bytes, CRC-32 4e5f6071\n"
    "vocabularies: source 212 bytes, CRC-32 01234567; target 208 bytes, CRC-32 89abcdef\nsamples-epoch: 640\nlabels-total: 9000\nseed: 1234\ngradient: summed\n"
    "last-validated: 20\nvalidators:\n  cross-entropy:\n    last-best: 1.5\n    has-best: true\n    stalled: 0\n"
    "gradient-norm-avg: 0.5\neta-factor: 0.5\nwarmup-start: 100u\nrate-warmup-start: 100u\nstalled-max: 2\n";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(HostileProgress, AGoodFileReadsBack) {
  TrainingState s = TrainingState::parse(kProgress, "p.yml");
  EXPECT_EQ(s.epochs, 2u);
  EXPECT_EQ(s.batches, 30u);
  EXPECT_EQ(s.validators.at("cross-entropy").lastBest, 1.5);
  TrainingState t = TrainingState::parse(s.toYaml(), "p.yml");
  EXPECT_EQ(t.toYaml(), s.toYaml());
  TrainingState fresh;
  EXPECT_EQ(TrainingState::parse(fresh.toYaml(), "p.yml").toYaml(), fresh.toYaml());
  EXPECT_EQ(s.batching, "--mini-batch 64");
  EXPECT_EQ(s.corpusSentencesEpoch, 640u);
  EXPECT_EQ(s.corpus, "2000 lines; 51,003 bytes, CRC-32 0a1b2c3d; 47,110 bytes, CRC-32 4e5f6071");
  EXPECT_EQ(s.vocabularies, "source 212 bytes, CRC-32 01234567; target 208 bytes, CRC-32 89abcdef");
  for(std::string gradient : {"summed", "per-label-of-all-ranks"}) {
    TrainingState t = TrainingState::parse(replaced(kProgress, "gradient: summed", "gradient: " + gradient), "p.yml");
    EXPECT_EQ(t.gradient, gradient);
    EXPECT_EQ(TrainingState::parse(t.toYaml(), "p.yml").gradient, gradient);
  }
}

TEST(HostileProgress, WrongTypesNegativeCountsAndMissingKeysNameFileKeyAndLine) {
  std::string path = "model.npz.progress.yml";
  expectError([&] { TrainingState::parse(replaced(kProgress, "batches: 30", "batches: abc"), path); },
              {path, "'batches'", "line 2", "non-negative integer", "'abc'"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "samples-epoch: 640", "samples-epoch: -640"), path); },
              {path, "'samples-epoch'", "line 9", "'-640'"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "seed: 1234\n", ""), path); }, {path, "'seed'", "missing"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "seed: 1234", "seed: [1, 2]"), path); },
              {path, "'seed'", "a sequence"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "has-best: true", "has-best: 7"), path); },
              {path, "'validators.cross-entropy.has-best'", "line 17", "true or false"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "last-best: 1.5", "last-best: x"), path); },
              {path, "'validators.cross-entropy.last-best'", "a number"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "stalled: 0", "stalled: -1"), path); },
              {path, "'validators.cross-entropy.stalled'"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "  cross-entropy:\n", "  - cross-entropy:\n"), path); },
              {path, "'validators'", "must be a map"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "epochs: 2", "epochs: 0"), path); }, {path, "'epochs'"});
  for(std::string gradient : {"mean", "per-label", "\"\""})
    expectError([&] { TrainingState::parse(replaced(kProgress, "gradient: summed", "gradient: " + gradient), path); },
                {path, "'gradient'", "summed or per-label-of-all-ranks"});
  for(std::string key : {"corpus-batches-epoch: 10\n", "corpus-sentences-epoch: 640\n", "batching: --mini-batch 64\n",
                         "gradient: summed\n", "gradient-norm-avg: 0.5\n", "eta-factor: 0.5\n", "warmup-start: 100u\n", "rate-warmup-start: 100u\n",
                         "stalled-max: 2\n", "vocabularies: source 212 bytes, CRC-32 01234567; target 208 bytes, CRC-32 89abcdef\n"})
    expectError([&] { TrainingState::parse(replaced(kProgress, key, ""), path); },
                {path, "'" + key.substr(0, key.find(':')) + "'", "missing"});
  expectError([&] { TrainingState::parse(replaced(kProgress, "batches-epoch: 10", "batches-epoch: 31"), path); },
              {path, "'batches-epoch'"});
  expectError([&] { TrainingState::parse(kProgress + "seed: 5\n", path); }, {path, "'seed'", "line 24", "twice"});
  for(std::string text : {"", "[1, 2]", "just text", "epochs: [", "{a: 1}: 2\n"})
    expectError([&] { TrainingState::parse(text, path); }, {path});
}

// A streamed corpus' position: each rank's window and mini-batch
TEST(HostileProgress, AStreamPositionReadsBackAndABadOneIsNamed) {
  std::string stream = "stream:\n  from: 12\n  ranks: 2\n  window-chunks: 50\n  chunk-lines: 500\n  windows: [3, 4]\n  batches: [7, 0]\n";
  TrainingState s = TrainingState::parse(kProgress + stream, "p.yml");
  EXPECT_EQ(s.stream.from, 12u);
  EXPECT_EQ(s.stream.windows, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(s.stream.batches, (std::vector<uint64_t>{7, 0}));
  EXPECT_EQ(TrainingState::parse(s.toYaml(), "p.yml").toYaml(), s.toYaml());
  std::string path = "model.npz.progress.yml";
  expectError([&] { TrainingState::parse(kProgress + replaced(stream, "[3, 4]", "[3]"), path); },
              {path, "'stream.windows'", "one non-negative integer per rank", "2 ranks"});
  expectError([&] { TrainingState::parse(kProgress + replaced(stream, "[7, 0]", "[7, -1]"), path); },
              {path, "'stream.batches'", "'-1'"});
  expectError([&] { TrainingState::parse(kProgress + replaced(stream, "[7, 0]", "[7, x]"), path); },
              {path, "'stream.batches'", "'x'"});
  expectError([&] { TrainingState::parse(kProgress + replaced(stream, "  from: 12\n", ""), path); },
              {path, "'stream.from'", "missing"});
  expectError([&] { TrainingState::parse(kProgress + "stream: 5\n", path); }, {path, "'stream'", "must be a map"});
}

TEST(HostileProgress, AMissingFileOrADirectoryIsNamed) {
  expectError([&] { TrainingState::fromYaml("/no/such/progress.yml"); }, {"/no/such/progress.yml", "does not exist"});
  std::string dir = temp("progress-dir.yml");
  std::filesystem::create_directories(dir);
  expectError([&] { TrainingState::fromYaml(dir); }, {dir, "directory"});
  std::string path = temp("progress.yml");
  writeAll(path, replaced(kProgress, "labels-total: 9000", "labels-total: 9.5"));
  expectError([&] { TrainingState::fromYaml(path); }, {path, "'labels-total'", "line 10"});
}

std::string checkpointState(const std::string& steps = "[[0, 6, 3]]", const std::string& more = "") {
  std::string progress;
  for(size_t b = 0, e; b < kProgress.size(); b = e + 1) {
    e = kProgress.find('\n', b);
    progress += "  " + kProgress.substr(b, e - b) + "\n";
  }
  return "progress:\n" + progress + "parameters: 6\nranks: 1\ndevices: 1\nparameter-layout: 6f0a\n"
         "architecture:\n  type: transformer\n  dim-emb: 8\noptimizer-steps: " + steps +
         "\ncounters:\n  calls: 4\n" + more;
}

TEST(HostileProgress, CheckpointStatesWithBadStepListsAndLayoutsAreNamed) {
  Checkpoint c;
  readCheckpointState(checkpointState(), "ck.npz", c);
  EXPECT_EQ(c.model.optimizerSteps.size(), 1u);
  EXPECT_EQ(c.model.counters.at("calls"), 4u);
  EXPECT_EQ(c.progress.batches, 30u);
  EXPECT_EQ(c.model.parameterLayout, "6f0a");
  EXPECT_EQ(c.architecture, "type: transformer\ndim-emb: 8\n");
  // an [offset, size, steps] entry of 0, 2 or 4 elements, not a list, or past the model
  for(std::string steps : {"[[]]", "[[0, 6]]", "[[0, 6, 3, 1]]", "[5]", "[[0, 7, 3]]", "[[18446744073709551615, 2, 1]]",
                           "[[0, -6, 3]]", "[[0, 6, x]]", "7", "{a: 1}"}) {
    Checkpoint d;
    expectError([&] { readCheckpointState(checkpointState(steps), "ck.npz", d); },
                {"ck.npz", "special:state.yml", "optimizer-steps"});
  }
  Checkpoint d;
  readCheckpointState(checkpointState("[]"), "ck.npz", d);  // none saved: steps count from 0
  EXPECT_TRUE(d.model.optimizerSteps.empty());
  expectError([&] { readCheckpointState(replaced(checkpointState(), "ranks: 1", "ranks: 0"), "ck.npz", d); },
              {"ck.npz", "'ranks'"});
  expectError([&] { readCheckpointState(replaced(checkpointState(), "devices: 1", "devices: -1"), "ck.npz", d); },
              {"ck.npz", "'devices'"});
  expectError([&] { readCheckpointState(replaced(checkpointState(), "calls: 4", "calls: -4"), "ck.npz", d); },
              {"ck.npz", "'counters.calls'"});
  expectError([&] { readCheckpointState(replaced(checkpointState(), "  batches: 30", "  batches: x"), "ck.npz", d); },
              {"ck.npz", "progress", "'batches'", "line 3"});
  expectError([&] { readCheckpointState("parameters: 6\n", "ck.npz", d); }, {"ck.npz", "'progress'"});
  expectError([&] { readCheckpointState(replaced(checkpointState(), "parameter-layout: 6f0a\n", ""), "ck.npz", d); },
              {"ck.npz", "special:state.yml", "'parameter-layout'", "missing"});
  expectError([&] { readCheckpointState(replaced(checkpointState(), "  type: transformer\n  dim-emb: 8\n", ""), "ck.npz", d); },
              {"ck.npz", "special:state.yml", "'architecture'", "must be a map"});
  expectError([&] { readCheckpointState(checkpointState() + "ranks: 2\n", "ck.npz", d); }, {"ck.npz", "'ranks'", "twice"});
}

TEST(HostileProgress, CheckpointArraysMustHoldTheModelsParameters) {
  ModelState m;
  m.n = 6;
  m.values.assign(6, 1.f);
  m.optimizerSteps.push_back({Range{0, 6}, 3});
  m.extras["server-view.client0"].assign(6, 0.f);
  TrainingState progress;
  std::string path = temp("ck.npz");
  writeCheckpoint(path, m, progress, "type: transformer\n");
  EXPECT_EQ(readCheckpoint(path).model.values.size(), 6u);
  m.extras["server-view.client0"].assign(3, 0.f);  // a shard read past its end
  writeCheckpoint(path, m, progress, "type: transformer\n");
  expectError([&] { readCheckpoint(path); }, {path, "extra:server-view.client0", "3 values"});
  m.extras.clear();
  m.n = 7;  // master_parameters of 6 for a model of 7
  writeCheckpoint(path, m, progress, "type: transformer\n");
  expectError([&] { readCheckpoint(path); }, {path, "master_parameters", "6 values"});
}

// --- what the fuzzers found ------------------------------------------------------------------

// Every input kept under fuzz/regressions/<target>/, and every seed under fuzz/corpus/<target>/,
// is given to its loader: it must load or be an Error, never crash (the fuzz build runs the same
// files through the fuzz targets). Each target must have had inputs, so a renamed folder or a
// target the test does not know fails here instead of passing with nothing read.
TEST(HostileInput, RegressionInputs) {
  namespace fs = std::filesystem;
  std::map<std::string, size_t> read;  // inputs per target
  for(std::string kind : {"regressions", "corpus"}) {
    fs::path root = fs::path(MARIAN_SOURCE_DIR) / "fuzz" / kind;
    ASSERT_TRUE(fs::is_directory(root)) << root;
    for(const auto& target : fs::directory_iterator(root)) {
      if(!target.is_directory())
        continue;
      std::string name = target.path().filename().string();
      if(name == "options")
        continue;  // test_options and the fuzz build run those
      for(const auto& input : fs::directory_iterator(target.path())) {
        if(!input.is_regular_file() || input.path().filename().string()[0] == '.')
          continue;
        std::string bytes = readAll(input.path().string());
        SCOPED_TRACE(input.path().string());
        std::string ext = name == "npz" ? ".npz" : name == "corpus" ? ".txt" : ".yml";
        std::string copy = temp("regression" + ext);
        writeAll(copy, bytes);
        try {
          if(name == "npz") {
            readNpz(copy);
          } else if(name == "vocab") {
            loadOrCreateVocab(copy, {}, 0);
          } else if(name == "corpus") {
            size_t lines = readLines(copy, "Corpus file").size();
            writeAll(copy + ".gz", bytes);
            readLines(copy + ".gz", "Corpus file");
            CorpusChunks chunks({copy, copy}, false, 3, ::testing::TempDir());  // the streamed reader
            EXPECT_EQ(chunks.lines(), lines);
          } else if(name == "progress") {
            TrainingState::parse(bytes, copy);
            Checkpoint c;
            readCheckpointState(bytes, copy, c);
          } else if(name == "wire") {
            fuzz::readWireRecord(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
          } else {
            ADD_FAILURE() << "fuzz target '" << name << "' has inputs but no loader in this test";
            continue;
          }
        } catch(const Error&) {
        }
        ++read[name];
      }
    }
  }
  for(std::string target : {"npz", "vocab", "corpus", "progress", "wire"})
    EXPECT_GT(read[target], 0u) << "no input of fuzz target '" << target << "' was read";
  size_t count = 0;
  for(const auto& [target, n] : read)
    count += n;
  std::cout << count << " fuzz seeds and regression inputs loaded or refused\n";
}

// --- records between ranks ------------------------------------------------------------------

// A valid record cut at every length, and with a byte more, is an Error naming it, never a crash
// or an allocation of what a corrupt count claims.
TEST(HostileWire, CutOrLongRecordsAreNamedErrors) {
  ModelState state;
  state.n = 3;
  state.values = {1.f, 2.f, 3.f};
  state.optimizer["adam-v"] = {0.f, 1.f, 2.f};
  state.counters["calls"] = 5;
  Message m;
  m.header.kind = MessageKind::pushSparse;
  m.sparse = {{1, 2}, {0.5f, -0.5f}};
  std::vector<char> packedState = state.pack(), packedMessage = m.pack();
  EXPECT_EQ(ModelState::unpack(packedState).pack(), packedState);
  EXPECT_EQ(Message::unpack(packedMessage).pack(), packedMessage);
  for(size_t cut = 0; cut < packedState.size(); ++cut)
    expectError([&] { ModelState::unpack(std::vector<char>(packedState.begin(), packedState.begin() + long(cut))); },
                {"Model state message"});
  for(size_t cut = 0; cut < packedMessage.size(); ++cut)
    expectError([&] { Message::unpack(std::vector<char>(packedMessage.begin(), packedMessage.begin() + long(cut))); },
                {"Parameter-server message"});
  packedState.push_back(0);
  expectError([&] { ModelState::unpack(packedState); }, {"Model state message", "1 bytes after its end"});
  packedMessage.push_back(0);
  expectError([&] { Message::unpack(packedMessage); }, {"Parameter-server message"});
}

TEST(HostileWire, CountsBeyondTheRecordAreRefusedBeforeAllocating) {
  ByteWriter w;
  w.put<uint64_t>(uint64_t(1) << 60);  // values of a model state: far more than the record holds
  w.put<float>(1.f);
  std::vector<char> bytes = w.take();
  expectError([&] { ByteReader(bytes, "Test record").getCounted<float>(); }, {"Test record", "announces"});
  Message m;
  m.header.kind = MessageKind::replyDense;
  m.header.count = uint64_t(1) << 62;
  std::vector<char> header(reinterpret_cast<const char*>(&m.header), reinterpret_cast<const char*>(&m.header + 1));
  expectError([&] { Message::unpack(header); }, {"Parameter-server message", "announces"});
  m.header.kind = MessageKind(99);
  m.header.count = 0;
  header.assign(reinterpret_cast<const char*>(&m.header), reinterpret_cast<const char*>(&m.header + 1));
  expectError([&] { Message::unpack(header); }, {"unknown kind 99"});
  expectError([&] { unpackSparse(std::vector<char>(12)); }, {"Sparse message of 12 bytes"});
  expectError([&] { unpackArray<float>(std::vector<char>(6), "Residual message"); }, {"Residual message of 6 bytes"});
}

}  // namespace
}  // namespace marian
